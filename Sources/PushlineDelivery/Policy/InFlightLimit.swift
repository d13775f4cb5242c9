import PushlineCore

/// The bound on requests in flight for one provider: connections × streams per connection.
/// The transport's own queue is bounded too; this keeps the sender from handing it more than
/// the connections can carry, so a slow provider holds requests here, counted, not in curl.
public struct InFlightLimit: Sendable, Equatable {
    public let capacity: Int
    public private(set) var inFlight = 0

    /// `connections` and `streamsPerConnection` within `SendingLimits` (APNs announces 500–1500
    /// streams, FCM about 100), clamped to those ranges.
    public init(connections: Int, streamsPerConnection: Int) {
        let c = Swift.min(Swift.max(connections, SendingLimits.connections.lowerBound), SendingLimits.connections.upperBound)
        let s = Swift.min(Swift.max(streamsPerConnection, SendingLimits.streamsPerConnection.lowerBound), SendingLimits.streamsPerConnection.upperBound)
        capacity = c * s
    }

    public var isFull: Bool { inFlight >= capacity }

    /// Takes a slot; false when all are taken.
    public mutating func tryAcquire() -> Bool {
        guard inFlight < capacity else { return false }
        inFlight += 1
        return true
    }

    /// Returns a slot (when its request completed, whatever the outcome).
    public mutating func release() {
        // A release without an acquire is a sender defect; it must not take the run down.
        assert(inFlight > 0, "InFlightLimit.release without an acquire")
        if inFlight > 0 { inFlight -= 1 }
    }
}
