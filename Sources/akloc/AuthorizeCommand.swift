import AklocProtocol

/// `akloc authorize USER|@GROUP always|when-in-use|deny`
struct AuthorizeCommand: Command {
    static let name = "authorize"
    static let abstract = "Set a user's or group's authorization rule (admin)"
    static let usage = "authorize USER|@GROUP always|when-in-use|deny"
    static let details = """
        Arguments:
          USER|@GROUP     a user name, or @ and a group name
          always          locations at any time
          when-in-use     locations only while the user has an active login session
          deny            no locations

        Rewrites the rule in the daemon's config file ([authorization]) atomically and reloads it;
        live clients of that user or group get their new status at once.
        Needs root or membership of the daemon's admin group (default akloc-admin).
        """

    var subject: String
    var rule: AuthorizationRule

    init(arguments: [String]) throws(CLIError) {
        let scanner = try ArgumentScanner(arguments)
        guard scanner.positionals.count == 2 else { throw .usage("usage: akloc \(Self.usage)") }
        subject = scanner.positionals[0]
        guard let rule = AuthorizationRule(wire: scanner.positionals[1]) else {
            throw .usage("the rule must be always, when-in-use or deny, not '\(scanner.positionals[1])'")
        }
        self.rule = rule
    }

    func validate() throws(CLIError) {
        guard ClientRequest.isValidSubject(subject) else {
            throw .usage("'\(subject)' is not a user name or @group")
        }
    }

    func run(_ context: CommandContext) throws(CLIError) -> Int32 {
        let connection = try DaemonConnection(path: context.socketPath, timeout: AklocCLI.replyTimeout)
        _ = try connection.call(.authorize(subject: subject, rule: rule))
        let spelled = rule == .whenInUse ? "when-in-use" : rule.rawValue
        Output.line("\(subject): \(spelled)")
        return ExitCode.ok
    }
}
