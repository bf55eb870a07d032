import Foundation

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// D-Bus introspection XML reduced to what an interface promises, one line
/// per element in document order: `interface NAME`, `method NAME`,
/// `signal NAME`, `property NAME TYPE ACCESS`, `arg NAME TYPE DIRECTION`,
/// `annotation NAME VALUE`. Comments and layout do not count, so GeoClue's
/// documented XML and akloc's terse one compare equal when they declare the same.
public enum IntrospectionXML {
    /// The lines for interfaces whose name starts with `prefix`.
    public static func describe(_ xml: String, interfacesWithPrefix prefix: String) -> [String] {
        let delegate = Collector(prefix: prefix)
        let parser = XMLParser(data: Data(xml.utf8))
        parser.delegate = delegate
        parser.shouldResolveExternalEntities = false
        guard parser.parse() else { return ["unparsable: \(parser.parserError.map { "\($0)" } ?? "?")"] }
        return delegate.lines
    }

    /// Child `<node name=...>` entries of the document's root node.
    public static func children(_ xml: String) -> [String] {
        let delegate = Collector(prefix: "")
        let parser = XMLParser(data: Data(xml.utf8))
        parser.delegate = delegate
        _ = parser.parse()
        return delegate.children
    }

    private final class Collector: NSObject, XMLParserDelegate {
        let prefix: String
        var lines: [String] = []
        var children: [String] = []
        var inWanted = false
        var depth = 0

        init(prefix: String) { self.prefix = prefix }

        func parser(
            _ parser: XMLParser, didStartElement element: String, namespaceURI: String?, qualifiedName: String?,
            attributes: [String: String] = [:]
        ) {
            depth += 1
            let name = attributes["name"] ?? ""
            switch element {
            case "node" where depth == 2:
                children.append(name)
            case "interface":
                inWanted = name.hasPrefix(prefix)
                if inWanted { lines.append("interface \(name)") }
            case "method" where inWanted, "signal" where inWanted:
                lines.append("\(element) \(name)")
            case "property" where inWanted:
                lines.append("property \(name) \(attributes["type"] ?? "") \(attributes["access"] ?? "")")
            case "arg" where inWanted:
                lines.append("arg \(name) \(attributes["type"] ?? "") \(attributes["direction"] ?? "")")
            case "annotation" where inWanted:
                lines.append("annotation \(name) \(attributes["value"] ?? "")")
            default:
                break
            }
        }

        func parser(
            _ parser: XMLParser, didEndElement element: String, namespaceURI: String?, qualifiedName: String?
        ) {
            depth -= 1
            if element == "interface" { inWanted = false }
        }
    }
}
