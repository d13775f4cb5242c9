import Synchronization

/// The OAuth exchange (FCM, ADM) over its own small HTTP/2 transport (the token endpoint is usually
/// another host than FCM's). One post at a time (`OAuthAccessTokenProvider` fetches one token at
/// a time; the gate makes it so for any caller), and the poster reads the transport's
/// completions itself until its answer: no task of the exchange's own, nothing to hand answers
/// between.
final class OAuthExchange: Sendable {
    private let transport: HTTP2Transport
    private let gate = Mutex<Gate>(Gate())

    private struct Gate {
        var busy = false
        /// Posters waiting for their turn, first come first served.
        var waiters: [CheckedContinuation<Void, Never>] = []
        var nextSlot: UInt64 = 1
    }

    static let timeoutMilliseconds = 30_000

    /// `proxy`: the provider's `proxy:` key; nil: the environment's proxy variables apply.
    init(caFile: String?, proxy: String? = nil) throws(TransportError) {
        var configuration = TransportConfiguration(
            connections: 1, streamsPerConnection: 4, caFile: caFile, maxResponseBodyBytes: OAuthTokenResponse.bodyLimit,
            capturedHeaderNames: ["retry-after"]
        )
        // A token endpoint is an ordinary HTTPS service: HTTP/1.1 is fine.
        configuration.allowsHTTP1 = true
        configuration.engine = .curl
        configuration.proxy = proxy
        transport = try HTTP2Transport(configuration)
    }

    /// Posts the token request and waits for its answer (the transport's timeout bounds the
    /// wait); status 0 when no answer came.
    func post(_ request: OAuthTokenRequest) async -> OAuthHTTPResponse {
        await enter()
        defer { leave() }
        let slot = gate.withLock { gate in
            defer { gate.nextSlot &+= 1 }
            return gate.nextSlot
        }
        // The body's bytes must live until the completion: the transport retains the owner.
        let body = request.body.withUnsafeBytes { RequestBytes(copying: $0) }
        let headers = request.headers.map { "\($0.name): \($0.value)" }
        let transportRequest = TransportRequest(
            slot: slot, method: .post, url: request.url, headerLines: headers, body: body.bytes, bodyOwner: body,
            timeoutMilliseconds: Self.timeoutMilliseconds
        )
        do {
            try await transport.submit(transportRequest)
        } catch {
            // Not taken (shut down, or malformed): no completion will come.
            return OAuthHTTPResponse(status: 0, body: [])
        }
        for await batch in transport.completions {
            // One post at a time: every answer is this slot's.
            for response in batch where response.slot == slot {
                return OAuthHTTPResponse(
                    status: response.result == .response ? response.status : 0, body: response.body,
                    bodyTruncatedAt: response.bodyTruncated ? OAuthTokenResponse.bodyLimit : nil
                )
            }
        }
        // The transport ended before answering.
        return OAuthHTTPResponse(status: 0, body: [])
    }

    private func enter() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = gate.withLock { gate -> Bool in
                guard gate.busy else {
                    gate.busy = true
                    return true
                }
                gate.waiters.append(continuation)
                return false
            }
            if now { continuation.resume() }
        }
    }

    /// Hands the turn to the next poster, or frees the gate.
    private func leave() {
        let next = gate.withLock { gate -> CheckedContinuation<Void, Never>? in
            guard !gate.waiters.isEmpty else {
                gate.busy = false
                return nil
            }
            return gate.waiters.removeFirst()
        }
        next?.resume()
    }

    /// Starts the shutdown without waiting for the transfer thread's end.
    func requestShutdown() {
        transport.requestShutdown(.cancelInFlight)
    }

    func shutdown() async {
        await transport.shutdown(.cancelInFlight)
    }
}
