import PushlineCore
import Synchronization

/// What a `LaneGroup` splits its provider's requests by (a Web Push origin, a webhook channel)
/// and how it makes the lane of a key when the key's first request comes.
protocol LaneGroupSource: Sendable {
    var provider: Provider { get }
    /// The key `request` is grouped by: requests of one key go to one lane, in order.
    func key(of request: OutgoingRequest) -> String
    /// Keys remembered at most (lanes and refusals together): past it, a new key's requests
    /// settle with `overflow` without a lane being made (bounded memory and work whatever the
    /// audience names).
    var keysRemembered: Int { get }
    var overflow: DeliveryOutcome { get }
    /// The lane of a new key, made from its first request (`lanesMade` lanes exist), its events
    /// going straight into `events` (the group's stream), or the outcome every request of the
    /// key settles with unsent.
    mutating func make(key: String, sample: OutgoingRequest, lanesMade: Int, events: LaneEventsInto) -> LaneGroupMember
}

enum LaneGroupMember: Sendable {
    case lane(ProviderLane)
    /// Every request of the key settles at once with this outcome.
    case refused(DeliveryOutcome)
}

/// One provider sent through several `ProviderLane`s, one per key (a push service origin, a
/// webhook channel), each with its own connections, rate and credentials; their transfer
/// threads yield their events straight into the group's one stream (nothing forwards them). A request is settled here, never sent, when its key is refused;
/// once the run stops (a drain or a cancel) a request of a key without a lane, or any request
/// after a cancel, is settled unsent (never attempted), as the lanes themselves settle theirs.
actor LaneGroup<Source: LaneGroupSource>: DeliveryLane {
    nonisolated let provider: Provider
    /// The members' events and the group's own settlements (bounded as every lane's are).
    nonisolated let events = LaneEvents()

    private enum Phase {
        case open
        /// Drained: nothing new starts; the stream still ends only at finish or cancel.
        case drained
        case finished
        case cancelled
    }

    private var source: Source
    private var phase = Phase.open
    private var members: [String: LaneGroupMember] = [:]
    private var lanes: [ProviderLane] = []
    private var ended = false
    /// Given to every lane the group makes (set before the first `send`).
    private nonisolated let wireLog = Mutex<(any WireLog)?>(nil)

    init(_ source: Source) {
        self.source = source
        provider = source.provider
    }

    /// Every lane the group makes from now on records into `log` (the group makes them per key,
    /// at their first request, after this is called).
    nonisolated func recordWireSends(to log: any WireLog) -> Bool {
        wireLog.withLock { $0 = log }
        return true
    }

    func send(_ requests: [OutgoingRequest]) async {
        // Requests of one key go together, in order.
        var groups: [(key: String, requests: [OutgoingRequest])] = []
        var position: [String: Int] = [:]
        for request in requests {
            let key = source.key(of: request)
            if let index = position[key] {
                groups[index].requests.append(request)
            } else {
                position[key] = groups.count
                groups.append((key, [request]))
            }
        }
        for group in groups {
            switch member(for: group.key, sample: group.requests[0]) {
            case .lane(let lane):
                await lane.send(group.requests)
            case .refused(let outcome):
                settle(group.requests, outcome)
            }
        }
    }

    /// The lane of `key`, made on first use; or how its requests settle unsent.
    private func member(for key: String, sample: OutgoingRequest) -> LaneGroupMember {
        switch phase {
        case .cancelled:
            // A send in progress when the group was cancelled (its lanes may have ended): the
            // run stopped before these were attempted.
            return .refused(.unsent(attempts: 0, possibleDuplicate: false))
        case .drained, .finished:
            if case .lane(let lane)? = members[key] { return .lane(lane) }
            return .refused(.unsent(attempts: 0, possibleDuplicate: false))
        case .open:
            break
        }
        if let known = members[key] { return known }
        guard members.count < source.keysRemembered else { return .refused(source.overflow) }
        let made = source.make(key: key, sample: sample, lanesMade: lanes.count, events: LaneEventsInto(events))
        if case .lane(let lane) = made {
            if let log = wireLog.withLock({ $0 }) { _ = lane.recordWireSends(to: log) }
            lanes.append(lane)
        }
        members[key] = made
        return made
    }

    private func settle(_ requests: [OutgoingRequest], _ outcome: DeliveryOutcome) {
        events.yield(requests.map { .settled(SettledRequest(request: $0, provider: provider, outcome: outcome, latency: nil, wasDeferred: false)) })
    }

    /// After `finish()` or `cancel()` returned from every lane, each lane's threads ended and
    /// their events are in the stream: it ends.
    private func endIfDone() {
        guard !ended, phase == .finished || phase == .cancelled else { return }
        ended = true
        events.finish()
    }

    /// Nothing: members sign their own credentials (VAPID, webhook signatures), which
    /// `ProviderSenders.lane` checks as it makes one.
    func run() async {}

    func finish() async {
        if phase != .cancelled { phase = .finished }
        for lane in lanes { await lane.finish() }
        endIfDone()
    }

    func drain() async {
        if phase == .open { phase = .drained }
        for lane in lanes { await lane.drain() }
    }

    func cancel() async {
        phase = .cancelled
        for lane in lanes { await lane.cancel() }
        endIfDone()
    }

    func report() async -> LaneReport {
        var total = LaneReport(provider: provider)
        for lane in lanes { total.add(await lane.report()) }
        return total
    }
}
