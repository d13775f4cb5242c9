/// The requests of one encoded batch: fixed-size entries in input order and one byte arena
/// their ranges point into. Encoders append to both as they write (reserve, then write: the
/// buffers keep their capacity across batches); the dry-run sink renders lines from them and the
/// senders send from them, with the campaign's `RouteTable` for everything constant per route.
public struct RequestIndex: Sendable {
    public private(set) var entries: [RequestEntry]
    /// The bytes every range points into. Encoders write through it (it is a `JSONWriter`);
    /// readers use `arena.bytes` or `withArena`.
    public var arena: JSONWriter

    public init(reservingCapacity capacity: Int = 0) {
        entries = []
        arena = JSONWriter(reservingCapacity: capacity)
    }

    public var count: Int { entries.count }
    public var isEmpty: Bool { entries.isEmpty }
    public subscript(i: Int) -> RequestEntry { entries[i] }

    public mutating func append(_ entry: RequestEntry) {
        entries.append(entry)
    }

    /// Points request `i`'s body at `body` (bytes appended to the arena: a Web Push message
    /// encrypted after encoding) and adds `flags`.
    public mutating func replaceBody(of i: Int, with body: ByteRange, adding flags: RequestFlags = []) {
        entries[i].body = body
        entries[i].flags.formUnion(flags)
    }

    /// Points request `i`'s header block at `headers` (a block rebuilt at the arena's end).
    public mutating func replaceHeaders(of i: Int, with headers: ByteRange) {
        entries[i].headers = headers
    }

    /// Makes room for `requests` more entries and `bytes` more arena bytes.
    public mutating func reserve(requests: Int, bytes: Int) {
        entries.reserveCapacity(entries.count &+ requests)
        arena.reserveCapacity(arena.count &+ bytes)
    }

    /// Empties the index, keeping both buffers' capacity.
    public mutating func removeAll() {
        entries.removeAll(keepingCapacity: true)
        arena.removeAll()
    }

    /// Rolls back to an earlier state (a line whose encoding failed part-way).
    public mutating func truncate(entries entryCount: Int, arenaBytes: Int) {
        if entries.count > entryCount { entries.removeSubrange(entryCount...) }
        if arena.count > arenaBytes { arena.truncate(to: arenaBytes, needsComma: false) }
    }

    /// Removes the entries at `positions` (ascending, each in range), keeping the others in
    /// order; their arena bytes stay, unreferenced (a skipped duplicate).
    public mutating func removeEntries(atAscending positions: [Int]) {
        guard !positions.isEmpty else { return }
        var kept = 0
        var next = 0
        for i in entries.indices {
            if next < positions.count, positions[next] == i {
                next += 1
                continue
            }
            entries[kept] = entries[i]
            kept += 1
        }
        entries.removeSubrange(kept...)
    }

    /// Calls `body` with the arena's bytes (valid only inside `body`).
    public func withArena<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R {
        arena.bytes.withUnsafeBytes(body)
    }

    /// The bytes of `range` (empty when it lies outside the arena).
    public func bytes(_ range: ByteRange) -> ArraySlice<UInt8> {
        guard range.end <= arena.count else { return [] }
        return arena.bytes[range.range]
    }

    /// The body of request `i`: exactly what the provider receives.
    public func body(_ i: Int) -> ArraySlice<UInt8> { bytes(entries[i].body) }
    public func target(_ i: Int) -> ArraySlice<UInt8> { bytes(entries[i].target) }
    public func recipient(_ i: Int) -> ArraySlice<UInt8> { bytes(entries[i].recipient) }

    /// Calls `body` with each per-request header item of request `i`.
    public func forEachHeader(_ i: Int, _ body: (RequestHeaderID, UnsafeRawBufferPointer) -> Void) {
        let block = entries[i].headers
        withArena { RequestHeaderBlock.forEach(in: $0, block: block, body) }
    }

}
