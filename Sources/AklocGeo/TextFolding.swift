/// Case- and diacritic-insensitive folding for name search (docs/geodata.md):
/// "Zürich" and "ZURICH" both fold to "zurich", "'s-Gravenhage" to
/// "s gravenhage". The place index in data/ was built with the same rule
/// (scripts/geodata/folding.py, which also generates the table), so a query
/// folded here matches the index byte for byte. Pure Swift: the stdlib gives
/// case mappings and categories, the generated table the decompositions.
public enum TextFolding {
    /// The folded form: lowercase words of letters and digits, one space apart.
    public static func fold(_ text: some StringProtocol) -> String {
        var out = String.UnicodeScalarView()
        var pendingSpace = false
        for scalar in text.unicodeScalars {
            for lower in scalar.properties.lowercaseMapping.unicodeScalars {
                forEachReplacement(of: lower) { folded in
                    switch kind(of: folded) {
                    case .drop:
                        break
                    case .separator:
                        pendingSpace = true
                    case .keep:
                        if pendingSpace, !out.isEmpty { out.append(" ") }
                        pendingSpace = false
                        out.append(folded)
                    }
                }
            }
        }
        return String(out)
    }

    /// The forms a name is searched by: its folded form, and where it has an
    /// apostrophe, the folded form with the apostrophe as a space. `fold`
    /// drops apostrophes ("Za'abeel" is "zaabeel"), but "ivoire" should find
    /// "Côte d'Ivoire".
    public static func searchForms(_ name: String) -> [String] {
        let folded = fold(name)
        guard name.unicodeScalars.contains(where: wordApostrophes.contains) else { return [folded] }
        var spaced = String.UnicodeScalarView()
        for scalar in name.unicodeScalars { spaced.append(wordApostrophes.contains(scalar) ? " " : scalar) }
        return [folded, fold(String(spaced))]
    }

    /// The apostrophes `searchForms` also reads as a space (d'Ivoire, d’Ivoire).
    private static let wordApostrophes: Set<Unicode.Scalar> = ["'", "\u{2019}", "\u{02BC}"]

    /// The words of the folded form.
    public static func words(_ text: some StringProtocol) -> [Substring] {
        fold(text).split(separator: " ")
    }

    /// Whether `word` (already folded) starts any word of the folded `text`,
    /// or a run of its words: the match rule of place and country search.
    public static func hasWordPrefix(_ folded: String, _ prefix: String) -> Bool {
        if prefix.isEmpty { return true }
        var start = folded.startIndex
        while true {
            if folded[start...].hasPrefix(prefix) { return true }
            guard let space = folded[start...].firstIndex(of: " ") else { return false }
            start = folded.index(after: space)
        }
    }

    private enum Kind { case keep, drop, separator }

    private static func kind(of scalar: Unicode.Scalar) -> Kind {
        if apostrophes.contains(scalar.value) { return .drop }
        switch scalar.properties.generalCategory {
        case .nonspacingMark, .spacingMark, .enclosingMark:
            return .drop
        case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter,
            .decimalNumber, .letterNumber, .otherNumber:
            return .keep
        default:
            return .separator
        }
    }

    private static func forEachReplacement(of scalar: Unicode.Scalar, _ body: (Unicode.Scalar) -> Void) {
        guard let index = tableIndex(of: scalar.value) else {
            body(scalar)
            return
        }
        let range = ranges[index]
        let start = Int(range >> 8)
        for value in scalars[start..<(start + Int(range & 0xFF))] {
            if let replacement = Unicode.Scalar(value) { body(replacement) }
        }
    }

    private static func tableIndex(of value: UInt32) -> Int? {
        guard value >= 0x80 else { return nil }
        var low = 0
        var high = keys.count
        while low < high {
            let mid = (low + high) / 2
            if keys[mid] < value { low = mid + 1 } else { high = mid }
        }
        return low < keys.count && keys[low] == value ? low : nil
    }
}
