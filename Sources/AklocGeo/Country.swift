/// DESIGN §9's `Country`, as CountryPickerView's `Country` carried over:
/// ISO 3166-1 codes and names from Debian iso-codes, the calling code from
/// phonenumbers (data/calling-codes.tsv), the flag from the code itself.
public struct Country: Hashable, Sendable {
    /// Alpha-2, e.g. "NL".
    public var code: String
    /// Alpha-3, e.g. "NLD"; empty for XK, which ISO does not assign.
    public var alpha3: String
    /// Numeric, three digits, e.g. "528"; empty for XK.
    public var numeric: String
    /// iso-codes' `name`, e.g. "Netherlands".
    public var name: String
    /// iso-codes' `official_name`, e.g. "Kingdom of the Netherlands", when it has one.
    public var officialName: String?
    /// iso-codes' `common_name` (e.g. "Taiwan" for "Taiwan, Province of China"), when it has one.
    public var commonName: String?
    /// `name` in the request's locale, from iso-codes' translations, when asked for and known.
    public var localizedName: String?
    /// "+31"; nil for the few places without one (Antarctica, Bouvet Island, …).
    public var phoneCode: String?

    public init(
        code: String, alpha3: String, numeric: String, name: String, officialName: String? = nil,
        commonName: String? = nil, localizedName: String? = nil, phoneCode: String? = nil
    ) {
        self.code = code
        self.alpha3 = alpha3
        self.numeric = numeric
        self.name = name
        self.officialName = officialName
        self.commonName = commonName
        self.localizedName = localizedName
        self.phoneCode = phoneCode
    }

    /// The two regional-indicator symbols of the code, e.g. "🇳🇱".
    public var flag: String {
        var scalars = String.UnicodeScalarView()
        for byte in code.utf8 where byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") {
            if let scalar = Unicode.Scalar(0x1F1E6 + UInt32(byte - UInt8(ascii: "A"))) { scalars.append(scalar) }
        }
        return String(scalars)
    }

    /// Every name the country is searched by.
    var names: [String] { [name, officialName, commonName, localizedName].compactMap { $0 } }
}
