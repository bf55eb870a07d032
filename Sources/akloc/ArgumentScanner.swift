/// A small getopt_long: `--name VALUE`, `--name=VALUE`, boolean `--flag`,
/// positionals, and `--` ending the options.
struct ArgumentScanner {
    private(set) var positionals: [String] = []
    private var values: [String: String] = [:]
    private var flags: Set<String> = []

    /// `options` take a value, `flags` do not; names include the dashes.
    init(_ arguments: [String], options optionNames: Set<String> = [], flags flagNames: Set<String> = [])
        throws(CLIError)
    {
        var index = 0
        var optionsEnded = false
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if optionsEnded || argument == "-" || !argument.hasPrefix("-") || Self.isNumber(argument) {
                positionals.append(argument)
                continue
            }
            if argument == "--" {
                optionsEnded = true
                continue
            }
            var name = argument
            var inlineValue: String?
            if let equals = argument.firstIndex(of: "="), argument.hasPrefix("--") {
                name = String(argument[..<equals])
                inlineValue = String(argument[argument.index(after: equals)...])
            }
            if optionNames.contains(name) {
                if let inlineValue {
                    values[name] = inlineValue
                } else {
                    guard index < arguments.count else { throw .usage("\(name) needs a value") }
                    values[name] = arguments[index]
                    index += 1
                }
            } else if flagNames.contains(name) {
                guard inlineValue == nil else { throw .usage("\(name) takes no value") }
                flags.insert(name)
            } else {
                throw .usage("unknown option \(name)")
            }
        }
    }

    func flag(_ name: String) -> Bool { flags.contains(name) }

    func value(_ name: String) -> String? { values[name] }

    /// A non-negative finite number of `unit`s, or nil if the option is absent.
    func number(_ name: String, unit: String, allowZero: Bool = true) throws(CLIError) -> Double? {
        guard let text = values[name] else { return nil }
        guard let number = Double(text), number.isFinite, allowZero ? number >= 0 : number > 0 else {
            throw .usage("\(name) needs a \(allowZero ? "non-negative" : "positive") number of \(unit), not '\(text)'")
        }
        return number
    }

    private static func isNumber(_ text: String) -> Bool { Double(text) != nil }
}
