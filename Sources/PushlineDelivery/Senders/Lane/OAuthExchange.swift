import Synchronization

/// The OAuth exchange (FCM, ADM) over its own small HTTP/2 transport (the token endpoint is usually
/// another host than FCM's): one request at a time in practice (`OAuthAccessTokenProvider` runs
/// one fetch at a time), each answered through a continuation keyed by its slot.
final class OAuthExchange: Sendable {
    private let transport: HTTP2Transport
    private let pending = Mutex<State>(State())

    private struct State {
        var nextSlot: UInt64 = 1
        var waiting: [UInt64: CheckedContinuation<OAuthHTTPResponse, Never>] = [:]
        var ended = false
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
        Task { await self.readCompletions() }
    }

    private func readCompletions() async {
        for await batch in transport.completions {
            for response in batch {
                let waiter = pending.withLock { $0.waiting.removeValue(forKey: response.slot) }
                waiter?.resume(returning: OAuthHTTPResponse(
                    status: response.result == .response ? response.status : 0, body: response.body,
                    bodyTruncatedAt: response.bodyTruncated ? OAuthTokenResponse.bodyLimit : nil
                ))
            }
        }
        // Ended: anything still waiting gets "no answer".
        let left = pending.withLock { state in
            state.ended = true
            defer { state.waiting.removeAll() }
            return Array(state.waiting.values)
        }
        for waiter in left { waiter.resume(returning: OAuthHTTPResponse(status: 0, body: [])) }
    }

    private func notTaken(_ slot: UInt64) {
        let waiter = pending.withLock { $0.waiting.removeValue(forKey: slot) }
        waiter?.resume(returning: OAuthHTTPResponse(status: 0, body: []))
    }

    /// Posts the token request; status 0 when no answer came.
    func post(_ request: OAuthTokenRequest) async -> OAuthHTTPResponse {
        // The body's bytes must live until the completion: the transport retains the owner.
        let body = request.body.withUnsafeBytes { RequestBytes(copying: $0) }
        let headers = request.headers.map { "\($0.name): \($0.value)" }
        return await withCheckedContinuation { (continuation: CheckedContinuation<OAuthHTTPResponse, Never>) in
            let slot: UInt64? = pending.withLock { state in
                guard !state.ended else { return nil }
                let slot = state.nextSlot
                state.nextSlot &+= 1
                state.waiting[slot] = continuation
                return slot
            }
            guard let slot else {
                continuation.resume(returning: OAuthHTTPResponse(status: 0, body: []))
                return
            }
            let transportRequest = TransportRequest(
                slot: slot, method: .post, url: request.url, headerLines: headers, body: body.bytes, bodyOwner: body,
                timeoutMilliseconds: Self.timeoutMilliseconds
            )
            Task {
                do {
                    try await self.transport.submit(transportRequest)
                } catch {
                    // Not taken: no completion will come.
                    self.notTaken(slot)
                }
            }
        }
    }

    func shutdown() async {
        await transport.shutdown(.cancelInFlight)
    }
}
