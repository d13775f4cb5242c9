import CPushlineRuntime

/// The digests of every token seen so far: an open-addressing table of `UInt64` with linear
/// probing, 8 bytes a slot, at most three quarters full (so 10.7 bytes a token at worst, plus
/// the old table while it doubles). Zero marks an empty slot; the digest 0 has a flag of its own.
///
/// Bounded: it grows to `maxSlots` and no further. Once full there, new digests are not
/// remembered (`isSaturated`; the run logs it), so a later copy of such a token is sent: memory
/// stays bounded even for a hostile audience, at the price of deduping only its first
/// `maxTokens` distinct tokens.
public struct TokenDigestSet: Sendable {
    private var slots: [UInt64]
    private var mask: Int
    private var hasZero = false
    public private(set) var count = 0
    public private(set) var isSaturated = false
    /// 2³¹ slots (16 GiB): about 1.6 billion distinct tokens.
    public let maxSlots: Int

    public init(initialSlots: Int = 1 << 16, maxSlots: Int = 1 << 31) {
        var size = 16
        while size < initialSlots { size <<= 1 }
        var limit = 16
        while limit < maxSlots { limit <<= 1 }
        self.maxSlots = max(size, limit)
        slots = [UInt64](repeating: 0, count: size)
        mask = size - 1
    }

    /// Most tokens remembered before it stops growing.
    public var maxTokens: Int { maxSlots / 4 * 3 }
    /// Slots allocated now (memory: 8 bytes each).
    public var capacity: Int { slots.count }

    /// Adds `digest`; false when it was already there (a duplicate).
    public mutating func insert(_ digest: UInt64) -> Bool {
        if digest == 0 {
            if hasZero { return false }
            hasZero = true
            count += 1
            return true
        }
        if (count + 1) * 4 > slots.count * 3 {
            guard slots.count < maxSlots else {
                isSaturated = true
                return !contains(digest)
            }
            grow()
        }
        var i = Self.home(digest, mask)
        while true {
            let slot = slots[i]
            if slot == 0 {
                slots[i] = digest
                count += 1
                return true
            }
            if slot == digest { return false }
            i = (i + 1) & mask
        }
    }

    /// Inserts a batch's digests in order; `isDuplicate(i)` is called for each one that was
    /// already there. What `insert` does one by one, faster for a batch: a first pass reads the
    /// home slot of every digest, loads that do not depend on each other, so the processor
    /// overlaps their cache misses (a large table is mostly misses); the inserts then find
    /// those slots in cache instead of waiting for each miss in turn.
    public mutating func insert(batch digests: [UInt64], isDuplicate: (Int) -> Void) {
        var touched: UInt64 = 0
        slots.withUnsafeBufferPointer { slots in
            for digest in digests { touched |= slots[Self.home(digest, mask)] }
        }
        cpushlineruntime_keep(touched)
        for (i, digest) in digests.enumerated() where !insert(digest) { isDuplicate(i) }
    }

    public func contains(_ digest: UInt64) -> Bool {
        if digest == 0 { return hasZero }
        var i = Self.home(digest, mask)
        while true {
            let slot = slots[i]
            if slot == 0 { return false }
            if slot == digest { return true }
            i = (i + 1) & mask
        }
    }

    /// The first slot to probe: the high bits (the digest's low bits feed nothing else, but a
    /// multiply spreads any weakness).
    @inline(__always)
    private static func home(_ digest: UInt64, _ mask: Int) -> Int {
        Int(truncatingIfNeeded: (digest &* 0x9E37_79B9_7F4A_7C15) >> 32) & mask
    }

    private mutating func grow() {
        let old = slots
        slots = [UInt64](repeating: 0, count: old.count * 2)
        mask = slots.count - 1
        for digest in old where digest != 0 {
            var i = Self.home(digest, mask)
            while slots[i] != 0 { i = (i + 1) & mask }
            slots[i] = digest
        }
    }
}
