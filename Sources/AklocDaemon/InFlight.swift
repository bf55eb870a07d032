import AklocCore
import AklocProtocol

/// What is between an input and its outcome: the requests the engine has
/// not answered yet (who asked, with which wire id), and the inputs that
/// came while a step was carried out (`Daemon.run`).
struct InFlight {
    private var nextToken: RequestToken = 1
    var requests: [RequestToken: (client: SubscriberID, id: RequestID?)] = [:]
    var inStep = false
    var deferred: [Engine.Input] = []

    /// A fresh token for a request the engine will answer.
    mutating func token() -> RequestToken {
        defer { nextToken += 1 }
        return nextToken
    }
}
