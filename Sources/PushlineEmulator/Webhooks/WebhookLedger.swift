import Crypto

/// The webhook ids the receiver has seen: how many valid attempts each had (the fault plan's
/// attempt number, as for a device token) and whether one was answered 200 (then a later one is
/// a duplicate delivery).
///
/// Bounded, since a campaign sends one id per message: past `capacity` ids the oldest is
/// forgotten (first in, first out), so a retry of a forgotten id counts as a first delivery
/// again. Ids are kept as 128 bits of their SHA-256 (an id may be 256 bytes; a collision among
/// millions is out of reach): 24 bytes per slot of a table at most 3/4 full, and 16 in the queue,
/// so about 70 MB for a million ids.
struct WebhookLedger {
    struct Key: Hashable {
        var high: UInt64
        var low: UInt64
    }

    private struct Entry {
        var attempts: UInt32 = 0
        var delivered = false
    }

    let capacity: Int
    private var entries: [Key: Entry] = [:]
    /// The keys in insertion order, a ring once `capacity` is reached: `oldest` is the next to go.
    private var order: [Key] = []
    private var oldest = 0

    init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    static func key(_ id: String) -> Key {
        let digest = Array(SHA256.hash(data: Array(id.utf8)))
        var high: UInt64 = 0
        var low: UInt64 = 0
        for index in 0..<8 {
            high = high << 8 | UInt64(digest[index])
            low = low << 8 | UInt64(digest[index + 8])
        }
        return Key(high: high, low: low)
    }

    var count: Int { entries.count }

    /// Claims the next attempt number for the id.
    mutating func nextAttempt(_ key: Key) -> Int {
        var entry = entries[key] ?? insert(key)
        let attempt = entry.attempts
        entry.attempts = attempt == .max ? .max : attempt + 1
        entries[key] = entry
        return Int(attempt)
    }

    /// Marks the id delivered; false when it already was (a duplicate).
    mutating func markDelivered(_ key: Key) -> Bool {
        var entry = entries[key] ?? insert(key)
        if entry.delivered { return false }
        entry.delivered = true
        entries[key] = entry
        return true
    }

    /// Takes a delivery back (its record could not be written: it was answered 500).
    mutating func unmarkDelivered(_ key: Key) {
        entries[key]?.delivered = false
    }

    mutating func reset() {
        entries = [:]
        order = []
        oldest = 0
    }

    /// Makes room for a new key (forgetting the oldest when full) and returns its empty entry.
    private mutating func insert(_ key: Key) -> Entry {
        if order.count < capacity {
            order.append(key)
        } else {
            entries[order[oldest]] = nil
            order[oldest] = key
            oldest = oldest + 1 == capacity ? 0 : oldest + 1
        }
        return Entry()
    }
}
