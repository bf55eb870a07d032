import AklocGeo
import Testing

@Suite struct TextFoldingTests {
    @Test func foldsCaseDiacriticsAndPunctuation() {
        #expect(TextFolding.fold("Zürich") == "zurich")
        #expect(TextFolding.fold("ZÜRICH") == "zurich")
        #expect(TextFolding.fold("São Paulo") == "sao paulo")
        #expect(TextFolding.fold("'s-Gravenhage") == "s gravenhage")
        #expect(TextFolding.fold("  Den   Haag ") == "den haag")
        #expect(TextFolding.fold("Straße") == "strasse")
        #expect(TextFolding.fold("Øresund, Æbeltoft; Łódź") == "oresund aebeltoft lodz")
        #expect(TextFolding.fold("Za'abeel") == "zaabeel")
        #expect(TextFolding.fold("İstanbul") == "istanbul")
        #expect(TextFolding.fold("Ḩattā") == "hatta")
        #expect(TextFolding.fold("ＴＯＫＹＯ") == "tokyo")
        #expect(TextFolding.fold("ﬁnland") == "finland")
        // Decomposed input (e + combining acute) folds as the precomposed one.
        #expect(TextFolding.fold("Cafe\u{301}") == TextFolding.fold("Café"))
        // Other scripts keep their letters, lowercased.
        #expect(TextFolding.fold("МОСКВА") == "москва")
        #expect(TextFolding.fold("北京市") == "北京市")
        #expect(TextFolding.fold("") == "")
        #expect(TextFolding.fold("-- , --") == "")
        #expect(TextFolding.fold("\u{0}\u{7}tab\tnew\nline") == "tab new line")
    }

    @Test func wordPrefixMatchesAnyWordOrRunOfWords() {
        #expect(TextFolding.hasWordPrefix("new york city", "york"))
        #expect(TextFolding.hasWordPrefix("new york city", "york ci"))
        #expect(TextFolding.hasWordPrefix("new york city", "new"))
        #expect(TextFolding.hasWordPrefix("new york city", ""))
        #expect(!TextFolding.hasWordPrefix("new york city", "ork"))
        #expect(!TextFolding.hasWordPrefix("new york city", "city x"))
        #expect(
            TextFolding.words("United Kingdom of Great-Britain") == ["united", "kingdom", "of", "great", "britain"])
    }
}
