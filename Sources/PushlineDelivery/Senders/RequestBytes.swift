public import PushlineCore

/// Request bytes with a lifetime of their own: a copy of a batch's arena (or of one request's
/// parts, for a retry) in one allocation that never moves, so the transport can send bodies from
/// it without copying while the batch it came from goes back to the pool. Every
/// `OutgoingRequest` cut from it retains it; the memory is freed when the last one completes.
public final class RequestBytes: @unchecked Sendable {
    // Written once in `init`, read-only after: safe to share across threads.
    private let storage: UnsafeMutableRawBufferPointer

    /// Copies `bytes` (one memcpy).
    public convenience init(copying bytes: UnsafeRawBufferPointer) {
        self.init(filling: bytes.count) { storage in
            if let base = bytes.baseAddress, bytes.count > 0 {
                storage.baseAddress!.copyMemory(from: base, byteCount: bytes.count)
            }
        }
    }

    /// Allocates `count` bytes and lets `fill` write all of them.
    private init(filling count: Int, _ fill: (UnsafeMutableRawBufferPointer) -> Void) {
        let allocation = UnsafeMutableRawBufferPointer.allocate(byteCount: max(count, 1), alignment: 16)
        let storage = UnsafeMutableRawBufferPointer(rebasing: allocation[0..<count])
        fill(storage)
        self.storage = storage
        self.allocation = allocation
    }

    /// `parts` laid end to end in one allocation (one copy each): a retry's own bytes.
    public convenience init(gathering parts: [UnsafeRawBufferPointer]) {
        var total = 0
        for part in parts { total &+= part.count }
        self.init(filling: total) { storage in
            var offset = 0
            for part in parts where part.count > 0 {
                storage.baseAddress!.advanced(by: offset).copyMemory(from: part.baseAddress!, byteCount: part.count)
                offset &+= part.count
            }
        }
    }

    /// Copies the arena of `index`: every range of its entries is valid in the copy.
    public static func arena(of index: RequestIndex) -> RequestBytes {
        index.withArena { RequestBytes(copying: $0) }
    }

    private let allocation: UnsafeMutableRawBufferPointer

    deinit { allocation.deallocate() }

    public var count: Int { storage.count }

    /// All the bytes (valid while `self` is alive).
    public var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(storage) }

    /// The bytes of `range`, or empty when it lies outside.
    public subscript(range: ByteRange) -> UnsafeRawBufferPointer {
        guard range.end <= storage.count, range.length > 0 else { return UnsafeRawBufferPointer(start: nil, count: 0) }
        return UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(storage)[range.range])
    }

    /// The bytes of `range` as a String (UTF-8, invalid bytes repaired): for result files and logs.
    public func string(_ range: ByteRange) -> String {
        String(decoding: self[range], as: UTF8.self)
    }
}
