import AklocCore

/// A GNU gettext message catalog (.mo), for iso-codes' country-name
/// translations (/usr/share/locale/LOCALE/LC_MESSAGES/iso_3166-1.mo). The
/// shell reads the file; this parses its bytes, either byte order.
public struct MessageCatalog: Hashable, Sendable {
    public static let maximumSize = 4 << 20

    /// Translations by their English msgid.
    public let translations: [String: String]
    /// Each translation's `TextFolding.searchForms`, by msgid: folded once,
    /// when the catalog is read (the daemon keeps one per locale), so that a
    /// country search with a locale only compares.
    let searchForms: [String: [FoldedText]]

    public init(_ bytes: UnsafeRawBufferPointer) throws(GeoDataReader.Error) {
        guard bytes.count <= Self.maximumSize else {
            throw GeoDataReader.Error(.corrupt, "\(bytes.count) bytes is too large for a message catalog")
        }
        let reader = GeoDataReader(bytes)
        guard bytes.count >= 28 else { throw GeoDataReader.Error(.truncated, "\(bytes.count) bytes, no .mo header") }
        let magic = try reader.uint32(at: 0)
        let swapped: Bool
        switch magic {
        case 0x9504_12DE: swapped = false
        case 0xDE12_0495: swapped = true
        default: throw GeoDataReader.Error(.badMagic, "not a .mo message catalog")
        }
        func word(_ offset: Int) throws(GeoDataReader.Error) -> Int {
            let value = try reader.uint32(at: offset)
            return Int(swapped ? value.byteSwapped : value)
        }
        let revision = try word(4)
        guard revision >> 16 <= 1 else { throw GeoDataReader.Error(.badVersion, ".mo revision \(revision)") }
        let count = try word(8)
        let originals = try word(12)
        let translated = try word(16)
        guard count <= bytes.count / 16 else {
            throw GeoDataReader.Error(.corrupt, ".mo claims \(count) messages in \(bytes.count) bytes")
        }
        var translations: [String: String] = [:]
        translations.reserveCapacity(count)
        // Each string is NUL-terminated: a file cut inside its last string is truncated.
        func string(_ table: Int, _ index: Int) throws(GeoDataReader.Error) -> String {
            let length = try word(table + index * 8)
            let offset = try word(table + index * 8 + 4)
            guard length < bytes.count, try reader.uint8(at: offset + length) == 0 else {
                throw GeoDataReader.Error(.corrupt, ".mo string \(index) is not NUL-terminated")
            }
            return try reader.string(at: offset, length: length)
        }
        for index in 0..<count {
            let key = try string(originals, index)
            let value = try string(translated, index)
            // The header (empty msgid), plural forms and contexts are not country names.
            guard !key.isEmpty, !key.utf8.contains(0), !key.utf8.contains(4) else { continue }
            translations[key] = value
        }
        self.translations = translations
        searchForms = translations.mapValues { TextFolding.searchForms($0).map(FoldedText.init) }
    }

    /// The catalog files to try for a locale such as "de", "pt_BR" or
    /// "sr@latin", most specific first, relative to /usr/share/locale; nil
    /// for a string that is not a locale name.
    public static func candidatePaths(locale: String, domain: String = "iso_3166-1") -> [String]? {
        let bytes = Array(locale.utf8)
        guard (2...32).contains(bytes.count), bytes.prefix(2).allSatisfy(Self.isLowercaseLetter) else { return nil }
        let language = bytes.prefix { Self.isLowercaseLetter($0) }
        guard (2...3).contains(language.count),
            bytes.allSatisfy({
                Self.isLowercaseLetter($0) || Self.isUppercaseLetter($0) || $0 == UInt8(ascii: "_")
                    || $0 == UInt8(ascii: "@") || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: ".")
                    || ($0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9"))
            }),
            !locale.contains("..")
        else { return nil }
        // "de_DE.UTF-8" is looked up as "de_DE"; "pt-BR" (BCP 47) as "pt_BR".
        let name = String(decoding: bytes.prefix { $0 != UInt8(ascii: ".") }, as: UTF8.self)
            .replacingHyphens()
        var names = [name]
        if let cut = name.firstIndex(where: { $0 == "_" || $0 == "@" }) {
            names.append(String(name[..<cut]))
        }
        return names.map { "\($0)/LC_MESSAGES/\(domain).mo" }
    }

    private static func isLowercaseLetter(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z")
    }
    private static func isUppercaseLetter(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z")
    }
}

extension String {
    fileprivate func replacingHyphens() -> String {
        String(decoding: utf8.map { $0 == UInt8(ascii: "-") ? UInt8(ascii: "_") : $0 }, as: UTF8.self)
    }
}
