/// One of `count` processes that run a campaign together (`--shard I/N`): it takes the
/// recipients whose id hashes to `index`, and the other processes take the rest.
///
/// The hash is 64-bit FNV-1a of the id's bytes (a string id unescaped, a number id as written),
/// modulo `count`: stable across runs, machines and versions, and simple to reproduce elsewhere
/// (docs/shards.md). Every device of a recipient lands in the same shard, so dedupe and quiet
/// hours decide the same way in every shard. A line without a usable id (not JSON, no `id`)
/// belongs to shard `line number mod count`, so exactly one shard reports it.
public struct AudienceShard: Sendable, Equatable, CustomStringConvertible {
    public let index: Int
    public let count: Int

    /// The most shards a campaign is split into: far beyond any scheduler's array size.
    public static let maximumCount = 100_000

    public struct Invalid: Error, Sendable, Equatable, CustomStringConvertible {
        public let description: String
    }

    public init(index: Int, count: Int) throws(Invalid) {
        guard (1...Self.maximumCount).contains(count) else {
            throw Invalid(description: "the shard count must be 1…\(Self.maximumCount), not \(count)")
        }
        guard (0..<count).contains(index) else {
            throw Invalid(description: "the shard index must be 0…\(count - 1) for \(count) shards, not \(index)")
        }
        self.index = index
        self.count = count
    }

    /// Parses `I/N`, e.g. `0/4` (indices count from 0, as Kubernetes, AWS Batch and Slurm's
    /// `--array=0-…` do).
    public init(parsing text: String) throws(Invalid) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let index = Self.number(parts[0]), let count = Self.number(parts[1]) else {
            throw Invalid(description: "--shard must be INDEX/COUNT with whole numbers, e.g. 0/4, not '\(Self.shown(text))'")
        }
        try self.init(index: index, count: count)
    }

    /// The schedulers' array-index variables, in the order they are looked for.
    public static let indexVariables = ["JOB_COMPLETION_INDEX", "AWS_BATCH_JOB_ARRAY_INDEX", "SLURM_ARRAY_TASK_ID"]

    /// The shard of `count` whose index the scheduler gives in `environment` (the first of
    /// `indexVariables` that is set).
    public init(count: Int, environment: [String: String]) throws(Invalid) {
        guard let (name, value) = Self.indexVariables.lazy.compactMap({ name in environment[name].map { (name, $0) } }).first else {
            throw Invalid(description: "--shard-count needs the shard index from the scheduler: set one of \(Self.indexVariables.joined(separator: ", ")), or use --shard INDEX/COUNT")
        }
        guard let index = Self.number(Substring(value)) else {
            throw Invalid(description: "\(name)='\(Self.shown(value))' is not a shard index")
        }
        try self.init(index: index, count: count)
    }

    public var description: String { "\(index)/\(count)" }

    /// Whether this shard takes the recipient whose id has these bytes.
    public func owns(recipientID bytes: UnsafeRawBufferPointer) -> Bool {
        Int(Self.fnv1a64(bytes) % UInt64(count)) == index
    }

    /// Whether this shard takes the recipient whose `id` is this value of its audience line.
    public func owns(recipient id: JSONValue) -> Bool {
        id.withRecipientIDBytes { owns(recipientID: $0) }
    }

    /// Whether this shard reports line `number`, which has no usable recipient id.
    public func owns(lineWithoutID number: Int) -> Bool {
        number % count == index
    }

    /// 64-bit FNV-1a (offset basis 14695981039346656037, prime 1099511628211).
    public static func fnv1a64(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01B3
        }
        return hash
    }

    /// A value from the command line or the environment as an error shows it: printable ASCII,
    /// at most 40 characters.
    private static func shown(_ text: String) -> String {
        String(decoding: text.utf8.prefix(40).map { (0x20...0x7E).contains($0) ? $0 : UInt8(ascii: "?") }, as: UTF8.self)
    }

    private static func number(_ text: Substring) -> Int? {
        guard (1...6).contains(text.utf8.count), text.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
        return Int(text)
    }
}

extension JSONValue {
    /// The bytes a recipient's `id` is hashed by, by the shards and by an experiment's split: a
    /// string's unescaped bytes, a number's as written.
    public func withRecipientIDBytes<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R {
        if let result = withUnescapedString(body) { return result }
        return withRawBytes(body)
    }
}

extension SkipReason {
    /// The recipient belongs to another shard of the campaign.
    public static func otherShard(_ shard: AudienceShard) -> Self {
        .init(otherShardCode, "the recipient belongs to another shard than \(shard)")
    }
}
