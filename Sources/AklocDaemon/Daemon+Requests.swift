import AklocCore
import AklocFeature
import AklocPosix
import AklocProtocol

extension Daemon {
    /// One request line: decode, check the right to make it, then answer it
    /// here (status, reload, authorize) or hand it to the engine.
    func handle(line: [UInt8], from client: ClientConnection) {
        let request: ClientRequest
        switch ClientRequest.decode(line) {
        case .success(let decoded):
            request = decoded
        case .failure(let error):
            counters.badRequests += 1
            if let departure = deliver(ServerEncoder.reply(id: error.id, error: error), to: client) {
                depart(client.id, departure)
            }
            return
        }
        switch request.operation {
        case .engine(let engineRequest):
            if request.operation.isAdmin, !client.isAdmin { return refuse(request, client) }
            if let refusal = features.refusal(of: engineRequest) {
                return answer(request, client, ServerEncoder.reply(id: request.id, error: refusal))
            }
            let token = inFlight.token()
            inFlight.requests[token] = (client.id, request.id)
            run(.request(client.id, token, engineRequest))
        case .status:
            answer(request, client, ServerEncoder.reply(id: request.id, status: status(for: client)))
        case .reload:
            guard client.isAdmin else { return refuse(request, client) }
            answer(request, client, replyTo(request, reload()))
        case .authorize(let subject, let rule):
            guard client.isAdmin else { return refuse(request, client) }
            answer(request, client, replyTo(request, authorize(subject: subject, rule: rule)))
        case .track, .clearTrack, .places, .geo:
            if request.operation.isAdmin, !client.isAdmin { return refuse(request, client) }
            let asker = FeatureClient(
                id: client.id, uid: client.credentials.uid, gid: client.credentials.gid, isAdmin: client.isAdmin,
                replyBudget: settings.configuration.socket.clientHardLimit / 2)
            switch features.answer(request.operation, id: request.id, from: asker) {
            case .success(let reply):
                answer(request, client, reply)
            case .failure(let error):
                if error.code == .badRequest { counters.badRequests += 1 }
                answer(request, client, ServerEncoder.reply(id: request.id, error: error))
            case nil:
                let error = ProtocolError(.unavailable, "\(request.operation.name) is served by no running feature")
                answer(request, client, ServerEncoder.reply(id: request.id, error: error))
            }
        }
    }

    private func refuse(_ request: ClientRequest, _ client: ClientConnection) {
        answer(
            request, client,
            ServerEncoder.reply(
                id: request.id,
                error: ProtocolError(
                    .forbidden,
                    "\(request.operation.name) needs root or membership of the \(settings.configuration.authorization.adminGroup) group"
                )))
    }

    private func replyTo(_ request: ClientRequest, _ result: Result<Void, ProtocolError>) -> [UInt8] {
        switch result {
        case .success: ServerEncoder.replyDone(id: request.id)
        case .failure(let error): ServerEncoder.reply(id: request.id, error: error)
        }
    }

    func answer(_ request: ClientRequest, _ client: ClientConnection, _ bytes: [UInt8]) {
        if let departure = deliver(bytes, to: client) { depart(client.id, departure) }
    }
}
