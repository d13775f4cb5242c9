import PushlineCore
import Synchronization

/// One provider's lane as the run sees it: `send` hands requests to the lane's
/// `LaneHost`s, one per transfer thread, whose `LaneStateMachine`s (queue, rate limiter,
/// in-flight limit, retry heap, warm-up, credentials) run on their transports' own threads,
/// between curl's turns. Built by `ProviderSenders.make`.
///
/// Call `finish()`, `drain()` or `cancel()` to end it: until then it waits for work.
final class ProviderLane: DeliveryLane {
    let provider: Provider
    let events: AsyncStream<[SendEvent]>
    private let hosts: [LaneHost]
    /// Own the transfer threads the hosts run on.
    private let transports: [HTTP2Transport]
    /// FCM's and ADM's token exchange, shared by the hosts: shut down once they all ended.
    private let oauth: OAuthExchange?

    init(provider: Provider, events: AsyncStream<[SendEvent]>, hosts: [LaneHost], transports: [HTTP2Transport], oauth: OAuthExchange? = nil) {
        self.provider = provider
        self.events = events
        self.hosts = hosts
        self.transports = transports
        self.oauth = oauth
    }

    /// Splits `requests` evenly over the transfer threads (in order within each share).
    func send(_ requests: [OutgoingRequest]) async {
        guard hosts.count > 1 else {
            await hosts[0].offer(requests)
            return
        }
        let share = (requests.count + hosts.count - 1) / hosts.count
        await withTaskGroup(of: Void.self) { group in
            for (index, host) in hosts.enumerated() {
                let start = Swift.min(index * share, requests.count)
                let part = Array(requests[start..<Swift.min(start + share, requests.count)])
                guard !part.isEmpty else { continue }
                group.addTask { await host.offer(part) }
            }
        }
    }

    /// Returns once every host ended (the events have ended) and the token exchange is shut down.
    func finish() async {
        await each(.finish)
        await oauth?.shutdown()
    }

    func drain() async { await each(.drain) }

    func cancel() async {
        await each(.cancel)
        await oauth?.shutdown()
    }

    func recordWireSends(to log: any WireLog) -> Bool {
        for host in hosts { host.attach(wireLog: log) }
        return true
    }

    private func each(_ control: LaneHost.Control) async {
        await withTaskGroup(of: Void.self) { group in
            for host in hosts { group.addTask { await host.control(control) } }
        }
    }

    /// The threads' reports added up: attempts, retries, slowdowns, pauses and connections
    /// summed, the rate the sum of the shares, the first stop message.
    func report() async -> LaneReport {
        var total = LaneReport(provider: provider)
        for host in hosts { total.add(host.report()) }
        return total
    }
}

/// Ends a lane's one event stream when the last of its transfer threads has ended, then shuts
/// down what they shared (the OAuth exchange).
final class LaneEventsEnd: Sendable {
    /// Threads still running; the stream is finished once it reaches 0.
    private let remaining: Mutex<Int>
    private let output: AsyncStream<[SendEvent]>.Continuation
    /// The stream is the lane's own (false: a `LaneGroup`'s, which ends it itself).
    private let ownsOutput: Bool

    init(hosts: Int, output: AsyncStream<[SendEvent]>.Continuation, ownsOutput: Bool = true) {
        remaining = Mutex(hosts)
        self.output = output
        self.ownsOutput = ownsOutput
    }

    /// One thread ended; the last one finishes the lane's events (its own stream).
    func hostEnded() {
        remaining.withLock { count in
            count -= 1
            if count == 0, ownsOutput { output.finish() }
        }
    }

    /// Emits `events` for a thread that has already ended (requests handed to it as it ended),
    /// unless the lane's stream has finished; false then.
    func yieldLate(_ events: [SendEvent]) -> Bool {
        remaining.withLock { count -> Bool in
            guard count > 0 else { return false }
            output.yield(events)
            return true
        }
    }
}

/// The stream a group's member lane yields its events into: the group's own.
struct LaneEventsInto: Sendable {
    let output: AsyncStream<[SendEvent]>.Continuation

    init(_ output: AsyncStream<[SendEvent]>.Continuation) { self.output = output }
}
