import PushlineDelivery

/// Requests cut for the lanes and not handed to them yet, in order (`DeliverySink`): a chunk
/// goes once the checkpoint's horizon covers its lines, as much of it as keeps the lanes at
/// `window` unsettled requests or fewer (the rest waits for settlements). Bounded by the batch
/// window, like everything the sink holds.
struct PendingChunks {
    struct Chunk {
        var lane: Int
        var requests: [OutgoingRequest]
        var lastLine: Int
    }

    let window: Int
    private var chunks: [Chunk] = []
    private var head = 0

    init(window: Int) {
        self.window = max(1, window)
    }

    var isEmpty: Bool { head == chunks.count }

    /// The highest line among lane `lane`'s next `count` waiting requests (a chunk's requests are in line
    /// order): the horizon to journal so that `count` more requests can go before the next write.
    func highestLine(ofNext count: Int, lane: Int) -> Int {
        var left = count
        var highest = 0
        for chunk in chunks[head...] where left > 0 && chunk.lane == lane {
            guard let last = chunk.requests.prefix(left).last else { continue }
            highest = max(highest, last.entry.line)
            left -= min(left, chunk.requests.count)
        }
        return highest
    }

    mutating func append(lane: Int, _ requests: [OutgoingRequest], lastLine: Int) {
        chunks.append(Chunk(lane: lane, requests: requests, lastLine: lastLine))
    }

    /// The next chunk, or as much of its front as the window has room for with `inLanes`
    /// requests in the lanes; nil when it has none.
    func next(inLanes: Int) -> Chunk? {
        guard head < chunks.count else { return nil }
        let room = window - max(0, inLanes)
        guard room > 0 else { return nil }
        var chunk = chunks[head]
        if chunk.requests.count > room { chunk.requests = Array(chunk.requests[..<room]) }
        return chunk
    }

    /// The first `count` requests of the next chunk were taken.
    mutating func removeFirst(_ count: Int) {
        if count < chunks[head].requests.count {
            chunks[head].requests.removeFirst(count)
            return
        }
        chunks[head].requests = []
        head += 1
        if head == chunks.count || head >= 64 {
            chunks.removeFirst(head)
            head = 0
        }
    }

    /// Every waiting chunk, removed (a stop settles them unsent).
    mutating func takeAll() -> [Chunk] {
        defer {
            chunks.removeAll()
            head = 0
        }
        return Array(chunks[head...])
    }
}
