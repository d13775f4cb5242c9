import Synchronization

/// The OAuth exchange (FCM, ADM) over its own small HTTP/2 transport (the token endpoint is usually
/// another host than FCM's): one request at a time in practice (`OAuthAccessTokenProvider` runs
/// one fetch at a time), each answered through a continuation keyed by its slot.
final class OAuthExchange: Sendable {
    private let transport: HTTP2Transport
    private let pending = Mutex<State>(State())

    private struct State {
        var nextSlot: UInt64 = 1
        /// A slot submitted, and its poster waiting for the answer or not yet.
        var waiting: [UInt64: CheckedContinuation<OAuthHTTPResponse, Never>?] = [:]
        /// Answers that came before their poster waited (the submit returns once the transport
        /// took the request, which may already be answered).
        var early: [UInt64: OAuthHTTPResponse] = [:]
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
                answer(response.slot, with: OAuthHTTPResponse(
                    status: response.result == .response ? response.status : 0, body: response.body,
                    bodyTruncatedAt: response.bodyTruncated ? OAuthTokenResponse.bodyLimit : nil
                ))
            }
        }
        // Ended: anything still waiting gets "no answer".
        let left = pending.withLock { state in
            state.ended = true
            defer { state.waiting.removeAll() }
            return state.waiting.values.compactMap { $0 }
        }
        for waiter in left { waiter.resume(returning: OAuthHTTPResponse(status: 0, body: [])) }
    }

    /// Hands `response` to the poster of `slot`, or keeps it until the poster waits.
    private func answer(_ slot: UInt64, with response: OAuthHTTPResponse) {
        let waiter = pending.withLock { state -> CheckedContinuation<OAuthHTTPResponse, Never>? in
            guard let entry = state.waiting[slot] else { return nil }
            guard let waiter = entry else {
                state.early[slot] = response
                return nil
            }
            state.waiting[slot] = nil
            return waiter
        }
        waiter?.resume(returning: response)
    }

    /// Posts the token request; status 0 when no answer came. Submitted from the caller's task
    /// (it waits while the transport is full), then answered through a continuation.
    func post(_ request: OAuthTokenRequest) async -> OAuthHTTPResponse {
        // The body's bytes must live until the completion: the transport retains the owner.
        let body = request.body.withUnsafeBytes { RequestBytes(copying: $0) }
        let headers = request.headers.map { "\($0.name): \($0.value)" }
        let slot: UInt64? = pending.withLock { state in
            guard !state.ended else { return nil }
            let slot = state.nextSlot
            state.nextSlot &+= 1
            state.waiting[slot] = .some(nil)
            return slot
        }
        guard let slot else { return OAuthHTTPResponse(status: 0, body: []) }
        let transportRequest = TransportRequest(
            slot: slot, method: .post, url: request.url, headerLines: headers, body: body.bytes, bodyOwner: body,
            timeoutMilliseconds: Self.timeoutMilliseconds
        )
        do {
            try await transport.submit(transportRequest)
        } catch {
            // Not taken: no completion will come.
            pending.withLock { _ = $0.waiting.removeValue(forKey: slot) }
            return OAuthHTTPResponse(status: 0, body: [])
        }
        return await withCheckedContinuation { (continuation: CheckedContinuation<OAuthHTTPResponse, Never>) in
            let early = pending.withLock { state -> OAuthHTTPResponse? in
                if let early = state.early.removeValue(forKey: slot) {
                    state.waiting[slot] = nil
                    return early
                }
                // The reader ended (answering everyone waiting) before this poster waited.
                guard state.waiting[slot] != nil else { return OAuthHTTPResponse(status: 0, body: []) }
                state.waiting[slot] = continuation
                return nil
            }
            if let early { continuation.resume(returning: early) }
        }
    }

    func shutdown() async {
        await transport.shutdown(.cancelInFlight)
    }
}
