public import PushlineCore

/// One request handed to a sender: its entry (line, device, route, and ranges into `bytes`) and
/// the bytes it points into. Self-contained, so it can outlive the batch it was cut from.
public struct OutgoingRequest: Sendable {
    /// The sink's id for this request; every event about it carries it back.
    public var tag: UInt64
    public var entry: RequestEntry
    public var bytes: RequestBytes

    public init(tag: UInt64, entry: RequestEntry, bytes: RequestBytes) {
        self.tag = tag
        self.entry = entry
        self.bytes = bytes
    }

    /// Cuts request `i` of `index`, whose arena was copied into `bytes` (`RequestBytes.arena(of:)`).
    public init(tag: UInt64, index: RequestIndex, at i: Int, bytes: RequestBytes) {
        self.init(tag: tag, entry: index[i], bytes: bytes)
    }

    /// This request alone, in bytes of its own (recipient, target, body, header block): what a
    /// retry keeps so the batch's bytes can be freed.
    public func detached() -> OutgoingRequest {
        var entry = self.entry
        let parts = [entry.recipient, entry.target, entry.body, entry.headers].map { bytes[$0] }
        let own = RequestBytes(gathering: parts)
        var start = 0
        var rebased: [ByteRange] = []
        for part in parts {
            rebased.append(ByteRange(start, start &+ part.count) ?? .empty)
            start &+= part.count
        }
        entry.recipient = rebased[0]
        entry.target = rebased[1]
        entry.body = rebased[2]
        entry.headers = rebased[3]
        return OutgoingRequest(tag: tag, entry: entry, bytes: own)
    }
}

/// What a sender reports about a request it was given.
public enum SendEvent: Sendable {
    /// The request has its final outcome.
    case settled(SettledRequest)
    /// The request waits in the retry queue (detached from its batch's bytes): its batch may be
    /// released; its line stays held until the `.settled` event for the same tag.
    case deferred(tag: UInt64, line: Int)
}

/// A request's final outcome, with what the results files need.
public struct SettledRequest: Sendable {
    public var request: OutgoingRequest
    public var provider: Provider
    public var outcome: DeliveryOutcome
    /// From the first submission to the final completion (nil when it was never sent: a stopped
    /// provider, a cancelled run).
    public var latency: Duration?
    /// Whether a `.deferred` event was sent for it before (the sink then releases its line).
    public var wasDeferred: Bool

    public init(request: OutgoingRequest, provider: Provider, outcome: DeliveryOutcome, latency: Duration?, wasDeferred: Bool) {
        self.request = request
        self.provider = provider
        self.outcome = outcome
        self.latency = latency
        self.wasDeferred = wasDeferred
    }
}
