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
    let events: LaneEvents
    private let hosts: [LaneHost]
    /// Own the transfer threads the hosts run on.
    private let transports: [HTTP2Transport]
    /// FCM's and ADM's token exchange, shared by the hosts: shut down once they all ended.
    private let oauth: OAuthExchange?
    /// The tokens and verdicts the hosts wait for (OAuth), fetched by `run()`.
    private let credentialRequests: LaneCredentialRequests?

    init(
        provider: Provider, events: LaneEvents, hosts: [LaneHost], transports: [HTTP2Transport], oauth: OAuthExchange? = nil,
        credentialRequests: LaneCredentialRequests? = nil
    ) {
        self.credentialRequests = credentialRequests
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

    /// Fetches the tokens the hosts ask for until the last host ended; at once without OAuth.
    func run() async {
        await credentialRequests?.run()
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

    /// After each thread's next whole turn (`LaneHost.nextTurn`).
    func nextTurn() async {
        for host in hosts { await host.nextTurn() }
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
    private let output: LaneEvents
    /// The stream is the lane's own (false: a `LaneGroup`'s, which ends it itself).
    private let ownsOutput: Bool
    /// Ended with the last thread: nobody is left to ask.
    private let credentialRequests: LaneCredentialRequests?

    init(hosts: Int, output: LaneEvents, ownsOutput: Bool = true, credentialRequests: LaneCredentialRequests? = nil) {
        remaining = Mutex(hosts)
        self.output = output
        self.ownsOutput = ownsOutput
        self.credentialRequests = credentialRequests
    }

    /// One thread ended; the last one finishes the lane's events (its own stream) and its
    /// credential requests.
    func hostEnded() {
        let last = remaining.withLock { count -> Bool in
            count -= 1
            if count == 0, ownsOutput { output.finish() }
            return count == 0
        }
        if last { credentialRequests?.end() }
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
    let output: LaneEvents

    init(_ output: LaneEvents) { self.output = output }
}
