/// Whole gzip members compressed where the bytes are made: a dry run compresses each batch's
/// request lines on the encode worker that rendered them, so `--gzip` spreads deflate over the
/// workers (as pigz does) instead of running it on the writer's one thread, which then bounded
/// the whole run. Concatenated members are one gzip file (RFC 1952 §2.2) to `gzip -d` and to the
/// audience reader; a member per batch costs under 1 % of the compressed size.
public enum GzipMember {
    /// Appends `input` compressed as one complete member (header, deflate, CRC-32 and length)
    /// to `output`. Throws zlib's status when it cannot start a stream (no memory for its
    /// state); `output` is then unchanged.
    public static func compress(_ input: UnsafeRawBufferPointer, level: Int, into output: inout [UInt8]) throws(GzipMemberFailure) {
        precondition((0...9).contains(level), "gzip level must be 0...9")
        // zlib counts in UInt32 and its state is ~270 KB: one deflater per member, fed in slices.
        let deflater: GzipDeflater
        do {
            deflater = try GzipDeflater(level: Int32(level), outputBufferSize: 64 << 10)
        } catch {
            throw GzipMemberFailure(status: error.status)
        }
        output.reserveCapacity(output.count + input.count / 4 + 64)
        let slice = 1 << 30
        var start = 0
        repeat {
            let end = min(start + slice, input.count)
            let part = input.isEmpty ? UnsafeBufferPointer<UInt8>(start: nil, count: 0)
                : UnsafeBufferPointer(rebasing: input.assumingMemoryBound(to: UInt8.self)[start..<end])
            deflater.compress(part, finish: end == input.count) { (compressed: UnsafeBufferPointer<UInt8>) in
                output.append(contentsOf: compressed)
            }
            start = end
        } while start < input.count
    }
}

/// zlib could not start a gzip stream: its status (`Z_MEM_ERROR`, `Z_VERSION_ERROR`).
public struct GzipMemberFailure: Error, Sendable {
    public var status: Int32
}
