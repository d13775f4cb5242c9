public import PushlineCore
public import PushlineDelivery
import Synchronization
import Foundation

/// What a running campaign shows while it runs, for the progress line and the metrics file.
///
/// Nothing here is touched per device: the reader stores its input offset once per batch (one
/// relaxed atomic store), and the sinks publish a copy of their counts at most every
/// `publishInterval` (one lock then); the reporter reads both from its own timer task.
public final class RunObserver: Sendable {
    /// How often a sink hands its counts over at most.
    public static let publishInterval: Duration = .milliseconds(100)

    /// The audience's size in bytes (compressed, as read), nil for standard input or anything
    /// that is not a regular file: then there is no percent and no ETA.
    public let audienceBytes: Int?
    public let started: ContinuousClock.Instant
    /// The metrics the sinks record into directly (request latencies), when a metrics file is
    /// written.
    public let metrics: RunMetrics?

    /// The campaign's name and the shard, once the run has started (`identify`).
    public struct Identity: Sendable, Equatable {
        public var campaign: String
        public var shard: AudienceShard?
    }

    /// Unknown (with the tasks waiting for it) until the run names itself.
    private enum IdentityState {
        case unknown(waiters: [UInt64: CheckedContinuation<Identity?, Never>])
        case known(Identity)
    }

    private let identity = Mutex(IdentityState.unknown(waiters: [:]))
    private let nextWaiter = Atomic<UInt64>(0)
    private let bytesRead = Atomic<Int>(0)
    private let counts = Mutex(LiveCounts())
    private let lanes = Mutex<[any DeliveryLane]>([])

    /// The sinks' counts as last published.
    public struct LiveCounts: Sendable {
        public var counts = RunCounts()
        /// Sending: requests handed to the lanes and not settled yet, and those waiting for a retry.
        public var inLanes = 0
        public var retrying = 0
        public init() {}
    }

    public init(audiencePath: String, metrics: RunMetrics? = nil, started: ContinuousClock.Instant = .now) {
        audienceBytes = Self.regularFileSize(audiencePath)
        self.metrics = metrics
        self.started = started
    }

    /// For tests: a known size.
    public init(audienceBytes: Int?, metrics: RunMetrics? = nil, started: ContinuousClock.Instant = .now) {
        self.audienceBytes = audienceBytes
        self.metrics = metrics
        self.started = started
    }

    static func regularFileSize(_ path: String) -> Int? {
        guard path != "-", let attributes = try? FileManager.default.attributesOfItem(atPath: path),
              attributes[.type] as? FileAttributeType == .typeRegular,
              let size = attributes[.size] as? NSNumber else { return nil }
        return size.intValue
    }

    // MARK: Producers

    /// The run names its campaign and shard as it starts: the metrics' `campaign` and `shard`
    /// labels and the metrics file's name in a folder. Only the first call counts.
    /// `arms`: an experiment's variants then `control` (the metrics' `variant` label).
    public func identify(campaign: String, shard: AudienceShard?, arms: [String]? = nil) {
        let named = Identity(campaign: campaign, shard: shard)
        let waiters = identity.withLock { state -> [CheckedContinuation<Identity?, Never>] in
            guard case .unknown(let waiters) = state else { return [] }
            state = .known(named)
            return Array(waiters.values)
        }
        metrics?.label(campaign: campaign, shard: shard, arms: arms)
        for waiter in waiters { waiter.resume(returning: named) }
    }

    public var identified: Identity? {
        identity.withLock { state in
            if case .known(let identity) = state { identity } else { nil }
        }
    }

    /// The identity once the run has named itself (at once if it has); nil when the waiting task
    /// is cancelled first (a run that never named itself has ended).
    public func identityWhenNamed() async -> Identity? {
        let id = nextWaiter.add(1, ordering: .relaxed).oldValue
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Identity?, Never>) in
                let now: Identity?? = identity.withLock { state in
                    switch state {
                    case .known(let identity):
                        return .some(identity)
                    case .unknown(var waiters):
                        if Task.isCancelled { return .some(nil) }
                        waiters[id] = continuation
                        state = .unknown(waiters: waiters)
                        return nil
                    }
                }
                if let now { continuation.resume(returning: now) }
            }
        } onCancel: {
            let waiter = identity.withLock { state -> CheckedContinuation<Identity?, Never>? in
                guard case .unknown(var waiters) = state, let waiter = waiters.removeValue(forKey: id) else { return nil }
                state = .unknown(waiters: waiters)
                return waiter
            }
            waiter?.resume(returning: nil)
        }
    }

    /// The reader's offset in the audience file (compressed bytes for gzip).
    public func readerAt(_ offset: Int) {
        bytesRead.store(offset, ordering: .relaxed)
    }

    public func publish(_ live: LiveCounts) {
        counts.withLock { $0 = live }
    }

    /// The sending lanes, whose rate-limit state the reporter reads.
    public func attach(lanes: [any DeliveryLane]) {
        self.lanes.withLock { $0 = lanes }
    }

    // MARK: The reporter

    public var compressedBytesRead: Int { bytesRead.load(ordering: .relaxed) }
    public var live: LiveCounts { counts.withLock { $0 } }

    /// Each lane's account as of its last turn (rate, slowdowns, pauses, connections, in flight).
    public func laneReports() async -> [LaneReport] {
        var reports: [LaneReport] = []
        for lane in lanes.withLock({ $0 }) { reports.append(await lane.report()) }
        return reports
    }
}

/// A sink's clock for publishing: true at most once per `RunObserver.publishInterval`.
struct PublishGate {
    private var last: ContinuousClock.Instant?

    mutating func due(_ now: ContinuousClock.Instant = .now) -> Bool {
        if let last, now - last < RunObserver.publishInterval { return false }
        last = now
        return true
    }
}
