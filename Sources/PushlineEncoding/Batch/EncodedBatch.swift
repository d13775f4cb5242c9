public import PushlineCore

/// The output of encoding one batch of audience lines: NDJSON request lines per provider, reject
/// lines, and the counts. Sinks append the bytes as they are; nothing is re-serialized.
public struct EncodedBatch: Sendable {
    /// Request lines per provider, indexed by `Provider.allCases` order.
    public var requests: [JSONWriter]
    public var rejects: JSONWriter
    /// Counts other than the per-provider written tally (kept in `writtenTally` on the hot path).
    var baseCounts = RunCounts()
    /// Devices written per provider, by `Provider.ordinal`: an array add per device instead of a
    /// dictionary update.
    var writtenTally = [Int](repeating: 0, count: Provider.allCases.count)

    /// What happened to every line and device of the batch.
    public var counts: RunCounts {
        get {
            var counts = baseCounts
            for provider in Provider.allCases where writtenTally[provider.ordinal] > 0 {
                counts.written[provider, default: 0] += writtenTally[provider.ordinal]
            }
            return counts
        }
        set {
            baseCounts = newValue
            writtenTally = [Int](repeating: 0, count: Provider.allCases.count)
        }
    }
    /// Position of the batch in the input, for ordered sinks and progress.
    public var sequence: Int
    public var firstLine = 0
    public var lastLine = 0

    public init(sequence: Int) {
        self.sequence = sequence
        requests = Provider.allCases.map { _ in JSONWriter(reservingCapacity: 0) }
        rejects = JSONWriter(reservingCapacity: 0)
    }

    /// Empties the batch for reuse, keeping every buffer's capacity.
    public mutating func removeAll(sequence: Int) {
        self.sequence = sequence
        for i in requests.indices { requests[i].removeAll() }
        rejects.removeAll()
        counts = RunCounts()
        firstLine = 0
        lastLine = 0
    }

    public func requests(for provider: Provider) -> JSONWriter {
        requests[provider.ordinal]
    }
}

extension Provider {
    /// Index into per-provider arrays.
    public var ordinal: Int {
        switch self {
        case .apns: 0
        case .fcm: 1
        case .webpush: 2
        case .adm: 3
        case .webhook: 4
        }
    }
}
