import AklocPosix

/// A property value as D-Bus carries it in a variant.
public enum BusValue: Hashable, Sendable {
    case bool(Bool)
    case uint32(UInt32)
    case double(Double)
    case string(String)
    case objectPath(String)
    /// A struct of two uint64 ("(tt)"): GeoClue's `Timestamp`.
    case uint64Pair(UInt64, UInt64)

    public var signature: String {
        switch self {
        case .bool: "b"
        case .uint32: "u"
        case .double: "d"
        case .string: "s"
        case .objectPath: "o"
        case .uint64Pair: "(tt)"
        }
    }
}

extension BusMessage {
    /// Appends `value` as a variant ("v").
    public func append(variant value: BusValue) throws(Errno) {
        try openContainer("v", value.signature)
        switch value {
        case .bool(let bool): try append(bool: bool)
        case .uint32(let number): try append(uint32: number)
        case .double(let number): try append(double: number)
        case .string(let text): try append(string: text)
        case .objectPath(let path): try append(objectPath: path)
        case .uint64Pair(let first, let second):
            try openContainer("r", "tt")
            try append(uint64: first)
            try append(uint64: second)
            try closeContainer()
        }
        try closeContainer()
    }

    /// Appends `a{sv}` of `properties`, in order.
    public func append(properties: [(String, BusValue)]) throws(Errno) {
        try openContainer("a", "{sv}")
        for (name, value) in properties {
            try openContainer("e", "sv")
            try append(string: name)
            try append(variant: value)
            try closeContainer()
        }
        try closeContainer()
    }

    /// Reads a variant holding a uint32, a string or a bool; nil for any other content.
    public func readVariant() throws(Errno) -> BusValue? {
        let contents = try peekVariantContents()
        try enterVariant(contents)
        defer { try? exitContainer() }
        switch contents {
        case "u": return .uint32(try readUInt32())
        case "s": return .string(try readString())
        case "b": return .bool(try readBool())
        default: return nil
        }
    }
}
