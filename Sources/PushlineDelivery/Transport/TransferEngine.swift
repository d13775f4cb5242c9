/// What sends requests for a `TransferLoop`: libcurl's multi interface or nghttp2 over OpenSSL
/// (docs/delivery.md, "The HTTP/2 engine"). The loop owns the transport's shared state, the
/// host's turns and shutdown; an engine owns the connections and the requests in flight.
///
/// Everything but `wake` runs on the transfer thread.
protocol TransferEngine: AnyObject {
    /// Does what is due without waiting (writes, timers, finished transfers) and appends a
    /// response for every request that ended.
    func perform(into completions: inout [TransportResponse])
    /// Sends what the turn started, then waits for the network, a timer of its own, or `wake`,
    /// at most `timeoutMilliseconds` (negative: no limit of the caller's), and handles what arrived. Appends responses for requests
    /// that ended meanwhile.
    func wait(timeoutMilliseconds: Int32, into completions: inout [TransportResponse])
    /// Takes a checked request (moved in: a copy would retain each of its references). One that
    /// cannot start gets its response appended at once.
    func start(_ request: consuming TransportRequest, into completions: inout [TransportResponse])
    /// Ends every request in flight as `.cancelled` (appended).
    func cancelAll(into completions: inout [TransportResponse])
    /// Requests taken and not yet ended.
    var inFlightCount: Int { get }
    /// Connections opened and requests written since the last call.
    func takeCounters() -> (connectionsOpened: Int, wireSends: UInt64)
    /// Interrupts a `wait` from any thread. The loop never calls it after `close`.
    func wake()
    /// Frees everything; nothing is in flight.
    func close()
}
