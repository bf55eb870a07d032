import AklocTestSupport
import Foundation
import Testing

/// The manual pages (man/*.scd) against what they describe, so they cannot
/// drift: every command and option `akloc --help` lists, every option of
/// `aklocd --help`, every exit status of both, and every key of
/// config/akloc.conf and docs/configuration.md, each in its section of the
/// right page; and each page renders through scdoc and `man --warnings`
/// without a warning.
@Suite(.enabled(if: DebianPackage.shouldRun(DebianPackage.manualTools), "skipped: manual page tools"))
struct DebianPackageManualTests {
    static func help(_ binary: String, _ arguments: [String]) throws -> String {
        let result = try DebianPackage.run(binary, arguments, timeout: 10)
        #expect(result.code == 0, "\(binary) \(arguments): \(result.stderr)")
        return result.stdout
    }

    /// The lines of a help text's block headed `title` (up to a blank line).
    static func block(_ title: String, in text: String) -> [Substring] {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        guard let start = lines.firstIndex(where: { $0.hasPrefix(title) }) else { return [] }
        return Array(lines[(start + 1)...].prefix { !$0.isEmpty })
    }

    /// `--min`, `--json`, `-h`: the flags at the start of a help block's
    /// lines (`  --min S      minimum …`, `  -h, --help   show …`).
    static func flags(_ lines: [Substring]) -> [String] {
        lines.flatMap { line -> [String] in
            let entry = String(line.drop { $0 == " " })
            guard entry.hasPrefix("-") else { return [] }
            let head = entry.components(separatedBy: "  ").first ?? entry
            return head.components(separatedBy: ", ").compactMap { part in
                let flag = part.split(separator: " ").first.map(String.init)
                return flag?.hasPrefix("-") == true ? flag : nil
            }
        }
    }

    static func mentions(_ word: String, in text: String?) -> Bool {
        text?.contains("*\(word)*") == true
    }

    @Test func everyAklocCommandOptionAndExitStatusIsInAklocOne() throws {
        guard DebianPackage.require(DebianPackage.manualTools) else { return }
        let page = try DebianPackage.source("akloc.1")
        let overview = try Self.help(Binaries.akloc, ["--help"])

        let commands = Self.block("Commands:", in: overview).compactMap { line in
            line.split(separator: " ").first.map(String.init)
        }
        #expect(commands.count >= 9, "commands in akloc --help: \(commands)")
        for command in commands {
            let section = DebianPackage.section("## akloc \(command)", in: page)
            #expect(section != nil, "akloc(1) has no '## akloc \(command)' section")
            let help = try Self.help(Binaries.akloc, [command, "--help"])
            for flag in Self.flags(Self.block("Options", in: help)) {
                #expect(Self.mentions(flag, in: section), "akloc(1) '## akloc \(command)' does not describe \(flag)")
            }
        }

        let global = DebianPackage.section("# GLOBAL OPTIONS", in: page)
        let globalFlags = Self.flags(Self.block("Options:", in: overview))
        #expect(globalFlags.contains("--socket"), "\(globalFlags)")
        for flag in globalFlags {
            #expect(Self.mentions(flag, in: global), "akloc(1) GLOBAL OPTIONS does not describe \(flag)")
        }
        #expect(overview.contains("AKLOC_SOCKET"))
        #expect(Self.mentions("AKLOC_SOCKET", in: DebianPackage.section("# ENVIRONMENT", in: page)))

        // "Exit status: 0 ok, 64 usage error, 69 …, 77 …, 1 any other failure."
        let exitText = overview.components(separatedBy: "Exit status:").dropFirst().first ?? ""
        let statuses = exitText.split(whereSeparator: { !$0.isNumber }).map(String.init)
        #expect(Set(statuses) == ["0", "1", "64", "69", "77"], "exit statuses in akloc --help: \(statuses)")
        let exitSection = DebianPackage.section("# EXIT STATUS", in: page)
        for status in statuses {
            #expect(Self.mentions(status, in: exitSection), "akloc(1) EXIT STATUS does not describe \(status)")
        }
    }

    @Test func everyAklocdOptionAndExitStatusIsInAklocdEight() throws {
        guard DebianPackage.require(DebianPackage.manualTools) else { return }
        let page = try DebianPackage.source("aklocd.8")
        let usage = try Self.help(Binaries.aklocd, ["--help"])
        let flags = Self.flags(Self.block("options:", in: usage))
        #expect(flags.contains("--check-config") && flags.contains("--state-dir"), "\(flags)")
        let options = DebianPackage.section("# OPTIONS", in: page)
        for flag in flags {
            #expect(Self.mentions(flag, in: options), "aklocd(8) OPTIONS does not describe \(flag)")
        }

        // The statuses aklocd exits with, from its entry point's source:
        // `exit(0)`, `fail(ExitCode.config, …)`, with ExitCode's names
        // resolved from Sources/AklocProtocol/ExitCode.swift.
        func source(_ path: String) throws -> String {
            try String(contentsOf: Binaries.packageRoot.appendingPathComponent(path), encoding: .utf8)
        }
        func captures(_ pattern: String, in text: String) throws -> [[String]] {
            let expression = try NSRegularExpression(pattern: pattern)
            return expression.matches(in: text, range: NSRange(text.startIndex..., in: text)).map { match in
                (1..<match.numberOfRanges).map { index in
                    Range(match.range(at: index), in: text).map { String(text[$0]) } ?? ""
                }
            }
        }
        var values: [String: String] = [:]
        for pair in try captures(
            #"static let (\w+): Int32 = (\d+)"#, in: source("Sources/AklocProtocol/ExitCode.swift"))
        {
            values[pair[0]] = pair[1]
        }
        let sources = ["Sources/aklocd/main.swift", "Sources/AklocDaemon/DaemonMain.swift"]
        var statuses: Set<String> = []
        for path in sources {
            for call in try captures(#"\b(?:exit|fail)\(\s*(?:(\d+)|ExitCode\.(\w+))"#, in: source(path)) {
                let status = call[0].isEmpty ? values[call[1]] : call[0]
                #expect(status != nil, "\(path): ExitCode.\(call[1]) is not in ExitCode.swift")
                if let status { statuses.insert(status) }
            }
        }
        #expect(statuses.isSuperset(of: ["0", "64", "71", "78"]), "exit statuses found in \(sources): \(statuses)")
        let exitSection = DebianPackage.section("# EXIT STATUS", in: page)
        for status in statuses.sorted() {
            #expect(Self.mentions(status, in: exitSection), "aklocd(8) EXIT STATUS does not describe \(status)")
        }
    }

    /// Every `key = value` of config/akloc.conf (commented out or not), by
    /// section. In [authorization] only `default` and `admin-group` are
    /// settings: the other lines are example rules (USER or @GROUP =
    /// always|when-in-use|deny), which the page describes as USER and @GROUP.
    static func configKeys() throws -> [(section: String, key: String)] {
        let text = try String(
            contentsOf: Binaries.packageRoot.appendingPathComponent("config/akloc.conf"), encoding: .utf8)
        let keyLine = try NSRegularExpression(pattern: #"^#?\s*(@?[a-z][a-z0-9-]*)\s*=\s*(\S*)"#)
        var section = ""
        var keys: [(String, String)] = []
        for line in text.split(separator: "\n").map(String.init) {
            if line.hasPrefix("["), let close = line.firstIndex(of: "]") {
                section = String(line[line.index(after: line.startIndex)..<close])
                continue
            }
            guard let match = keyLine.firstMatch(in: line, range: NSRange(line.startIndex..., in: line)),
                let keyRange = Range(match.range(at: 1), in: line), let valueRange = Range(match.range(at: 2), in: line)
            else { continue }
            let key = String(line[keyRange])
            let isRule = ["always", "when-in-use", "deny"].contains(String(line[valueRange])) && key != "default"
            if section == "authorization", isRule { continue }
            keys.append((section, key))
        }
        return keys
    }

    /// The keys of docs/configuration.md's tables: the first cell of each
    /// row under a "### `[section]`" heading (USER and @GROUP are not keys).
    static func documentedKeys() throws -> [(section: String, key: String)] {
        let text = try String(
            contentsOf: Binaries.packageRoot.appendingPathComponent("docs/configuration.md"), encoding: .utf8)
        let heading = try NSRegularExpression(pattern: #"^### `\[([a-z]+)\]`"#)
        let code = try NSRegularExpression(pattern: #"`([a-z][a-z0-9-]*)`"#)
        var section: String?
        var keys: [(String, String)] = []
        for line in text.split(separator: "\n").map(String.init) {
            let whole = NSRange(line.startIndex..., in: line)
            if line.hasPrefix("#") {
                section = heading.firstMatch(in: line, range: whole).flatMap { Range($0.range(at: 1), in: line) }
                    .map { String(line[$0]) }
                continue
            }
            guard let section, line.hasPrefix("| `") else { continue }
            let cell = String(line.dropFirst(2).prefix { $0 != "|" })
            for match in code.matches(in: cell, range: NSRange(cell.startIndex..., in: cell)) {
                if let range = Range(match.range(at: 1), in: cell) { keys.append((section, String(cell[range]))) }
            }
        }
        return keys
    }

    @Test func everyConfigKeyIsInAklocConfFiveAndNoOther() throws {
        guard DebianPackage.require(DebianPackage.manualTools) else { return }
        let page = try DebianPackage.source("akloc.conf.5")
        let inFile = try Self.configKeys()
        let inDocs = try Self.documentedKeys()
        #expect(inFile.count >= 35, "keys found in config/akloc.conf: \(inFile.count)")
        #expect(inDocs.count >= 35, "keys found in docs/configuration.md: \(inDocs.count)")
        var seen: Set<String> = []
        let keys = (inFile + inDocs).filter { seen.insert("\($0.section).\($0.key)").inserted }
        for (section, key) in keys {
            let text = DebianPackage.section("# [\(section)]", in: page)
            #expect(text != nil, "akloc.conf(5) has no '# [\(section)]' section")
            #expect(Self.mentions(key, in: text), "akloc.conf(5) [\(section)] does not describe \(key)")
        }
        // And the other way: each key the page documents (`*key* = …`) is in
        // the file or the docs, so a removed or renamed key cannot stay.
        let documented = try NSRegularExpression(pattern: #"^\*([a-z][a-z0-9-]*)\* ="#, options: .anchorsMatchLines)
        for section in Set(keys.map(\.section)) {
            let text = DebianPackage.section("# [\(section)]", in: page) ?? ""
            let known = Set(keys.filter { $0.section == section }.map(\.key))
            for match in documented.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
                guard let range = Range(match.range(at: 1), in: text) else { continue }
                #expect(known.contains(String(text[range])), "akloc.conf(5) [\(section)] describes \(text[range])")
            }
        }
    }

    @Test(arguments: DebianPackage.pages)
    func pageRendersWithoutWarnings(_ page: String) throws {
        guard DebianPackage.require(DebianPackage.manualTools) else { return }
        let scratch = try ScratchDirectory()
        let output = scratch.path(page)
        let source = Binaries.packageRoot.appendingPathComponent("man/\(page).scd").path
        let scdoc = try DebianPackage.run("/bin/sh", ["-c", "scdoc <\"$1\" >\"$2\"", "sh", source, output])
        #expect(scdoc.code == 0, "scdoc \(page): \(scdoc.stderr)")
        let man = try DebianPackage.manWarnings(output)
        #expect(man.code == 0 && man.warnings.isEmpty, "man --warnings \(page):\n\(man.warnings)")
        let name = page.split(separator: ".").dropLast().joined(separator: ".")
        #expect(man.text.contains("NAME") && man.text.contains(name), "\(man.text.prefix(300))")
    }
}
