/// An experiment's split of the audience: a holdout (`control`) and weighted variants, decided
/// per recipient from the experiment's id and the recipient's id alone (docs/pipeline.md,
/// "Experiments").
///
/// The same (experiment id, recipient id) always gives the same arm: on a rerun, a `--resume`,
/// on any machine and under any `--shard` split, and every device of a recipient shares it. The
/// hash is SipHash-2-4 keyed by the experiment id, not the shards' FNV-1a: which shard takes a
/// recipient says nothing about its arm, and a new experiment id draws a new split.
///
/// A class: every line reads it, and a copy of a struct holding arrays retained each of them (with
/// two encode workers sharing them, a few percent of a dry run's CPU went to contended reference
/// counts). Each worker gets an instance of its own (`CampaignEncoder.forAnotherWorker`).
public final class ExperimentSplit: Sendable, Equatable {
    /// Where a recipient lands.
    public enum Arm: Sendable, Hashable {
        /// The holdout: none of the recipient's devices is addressed.
        case control
        /// Variant `index` of `variants`.
        case variant(Int)
    }

    public struct Variant: Sendable, Equatable {
        public var name: String
        public var weight: Double
        public init(name: String, weight: Double) {
            self.name = name
            self.weight = weight
        }
    }

    public let id: String
    /// The holdout's share, 0 ≤ control < 1.
    public let control: Double
    public let variants: [Variant]
    /// SipHash key derived from `id`.
    private let key: (UInt64, UInt64)
    /// Upper bounds in the 53-bit draw: below `controlBound` is control, then variant i below
    /// `variantBounds[i]` (the last is 2^53).
    private let controlBound: UInt64
    private let variantBounds: [UInt64]

    /// The draw is a 53-bit number: a double holds it exactly, so bounds computed with doubles
    /// are exact where it matters (the edges).
    static let drawRange: UInt64 = 1 << 53

    /// `control` in [0, 1), at least one variant, every weight finite and > 0 (the pipeline's
    /// schema checks these with paths; here they are preconditions).
    public init(id: String, control: Double, variants: [Variant]) {
        precondition(control >= 0 && control < 1 && !variants.isEmpty && variants.allSatisfy { $0.weight.isFinite && $0.weight > 0 })
        self.id = id
        self.control = control
        self.variants = variants
        key = Self.key(for: id)
        let range = Double(Self.drawRange)
        let controlBound = UInt64((control * range).rounded(.down))
        self.controlBound = controlBound
        let total = variants.reduce(0) { $0 + $1.weight }
        let rest = Double(Self.drawRange - controlBound)
        var cumulative = 0.0
        var bounds: [UInt64] = []
        for (i, variant) in variants.enumerated() {
            cumulative += variant.weight
            if i == variants.count - 1 {
                bounds.append(Self.drawRange)
            } else {
                bounds.append(Swift.min(Self.drawRange, controlBound + UInt64((rest * (cumulative / total)).rounded(.down))))
            }
        }
        variantBounds = bounds
    }

    public static func == (a: ExperimentSplit, b: ExperimentSplit) -> Bool {
        a.id == b.id && a.control == b.control && a.variants == b.variants
    }

    /// The arm of the recipient whose id has these bytes (a string id unescaped, a number id as
    /// written: the bytes the shards hash).
    public func arm(recipientID bytes: UnsafeRawBufferPointer) -> Arm {
        let draw = SipHash24.hash(bytes, key: key) >> 11
        if draw < controlBound { return .control }
        for (i, bound) in variantBounds.enumerated() where draw < bound { return .variant(i) }
        return .variant(variants.count - 1)
    }

    /// The arm of the recipient whose `id` is this value of its audience line (a string by its
    /// unescaped bytes, a number as written: the bytes the shards hash).
    public func arm(recipient id: JSONValue) -> Arm {
        id.withRecipientIDBytes { arm(recipientID: $0) }
    }

    /// The arm's index in `RunCounts.byArm`: the variant's, the control after the variants.
    public func countIndex(of arm: Arm) -> Int {
        switch arm {
        case .control: variants.count
        case .variant(let i): i
        }
    }

    public func arm(recipientID text: String) -> Arm {
        var text = text
        return text.withUTF8 { arm(recipientID: UnsafeRawBufferPointer($0)) }
    }

    /// The arm's name in results: the variant's, or `control`.
    public func name(of arm: Arm) -> String {
        switch arm {
        case .control: Self.controlName
        case .variant(let i): variants[i].name
        }
    }

    public static let controlName = "control"

    /// Every arm's name in `RunCounts.byArm`'s order: the variants', then `control`.
    public var armNames: [String] { variants.map(\.name) + [Self.controlName] }

    /// Whether some recipients are held out (and `holdout.ndjson` is written).
    public var holdsOut: Bool { control > 0 }

    /// Each arm's expected share of recipients: control first, then the variants in order.
    public var expectedShares: [Double] {
        let total = variants.reduce(0) { $0 + $1.weight }
        return [control] + variants.map { (1 - control) * $0.weight / total }
    }

    /// The key is SipHash-2-4 of the id under a fixed key (the bytes of "pushline", "experime"), twice:
    /// the id alone, then the id and a 0x01 byte.
    static func key(for id: String) -> (UInt64, UInt64) {
        let fixed: (UInt64, UInt64) = (0x7075_7368_6c69_6e65, 0x6578_7065_7269_6d65)
        var bytes = Array(id.utf8)
        let k0 = bytes.withUnsafeBytes { SipHash24.hash($0, key: fixed) }
        bytes.append(0x01)
        let k1 = bytes.withUnsafeBytes { SipHash24.hash($0, key: fixed) }
        return (k0, k1)
    }
}

/// SipHash-2-4 (Aumasson and Bernstein, 2012) with a 64-bit result: a keyed hash whose output
/// is indistinguishable from random for anyone without the key, simple to reproduce elsewhere.
enum SipHash24 {
    static func hash(_ bytes: UnsafeRawBufferPointer, key: (UInt64, UInt64)) -> UInt64 {
        var v0: UInt64 = 0x736f_6d65_7073_6575 ^ key.0
        var v1: UInt64 = 0x646f_7261_6e64_6f6d ^ key.1
        var v2: UInt64 = 0x6c79_6765_6e65_7261 ^ key.0
        var v3: UInt64 = 0x7465_6462_7974_6573 ^ key.1

        @inline(__always) func round() {
            v0 = v0 &+ v1; v1 = rotate(v1, 13); v1 ^= v0; v0 = rotate(v0, 32)
            v2 = v2 &+ v3; v3 = rotate(v3, 16); v3 ^= v2
            v0 = v0 &+ v3; v3 = rotate(v3, 21); v3 ^= v0
            v2 = v2 &+ v1; v1 = rotate(v1, 17); v1 ^= v2; v2 = rotate(v2, 32)
        }

        let count = bytes.count
        let whole = count & ~7
        var i = 0
        while i < whole {
            var m: UInt64 = 0
            for j in 0..<8 { m |= UInt64(bytes[i &+ j]) << (8 &* UInt64(j)) }
            v3 ^= m
            round(); round()
            v0 ^= m
            i &+= 8
        }
        var last = UInt64(truncatingIfNeeded: count) << 56
        for j in 0..<(count &- whole) { last |= UInt64(bytes[whole &+ j]) << (8 &* UInt64(j)) }
        v3 ^= last
        round(); round()
        v0 ^= last
        v2 ^= 0xff
        round(); round(); round(); round()
        return v0 ^ v1 ^ v2 ^ v3
    }

    @inline(__always) private static func rotate(_ x: UInt64, _ b: UInt64) -> UInt64 {
        (x << b) | (x >> (64 &- b))
    }
}
