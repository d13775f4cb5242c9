import CZlib

/// Compresses a byte stream into one gzip member (RFC 1952), which `gzip -t` and `gzip -dc` accept.
///
/// Output goes through the deflater's own buffer to a `drain` closure, so the caller decides
/// where compressed bytes land. A class so the `z_stream` keeps a stable address.
final class GzipDeflater {
    private let stream: UnsafeMutablePointer<z_stream>
    private let output: UnsafeMutableBufferPointer<UInt8>

    /// `level` is zlib's 0 (store) to 9 (smallest); gzip's default is 6.
    init(level: Int32, outputBufferSize: Int) throws(GzipDeflaterInitFailure) {
        precondition((0...9).contains(level), "gzip level must be 0...9")
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        // 31 = 15-bit window + gzip wrapper (header and CRC-32 trailer).
        let status = czlib_deflate_init2(stream, level, 31)
        guard status == Z_OK else {
            stream.deinitialize(count: 1)
            stream.deallocate()
            throw GzipDeflaterInitFailure(status: status)
        }
        output = .allocate(capacity: outputBufferSize)
    }

    deinit {
        deflateEnd(stream)
        stream.deinitialize(count: 1)
        stream.deallocate()
        output.deallocate()
    }

    /// Compresses `input`; with `finish`, also ends the member. Full output buffers go to `drain`.
    func compress<E: Error>(
        _ input: UnsafeBufferPointer<UInt8>, finish: Bool,
        drain: (UnsafeBufferPointer<UInt8>) throws(E) -> Void
    ) throws(E) {
        stream.pointee.next_in = UnsafeMutablePointer(mutating: input.baseAddress)
        stream.pointee.avail_in = UInt32(input.count)
        defer { stream.pointee.next_in = nil }
        let flush = finish ? Z_FINISH : Z_NO_FLUSH
        var status: Int32
        // zlib's own loop: keep calling while it fills the whole output buffer.
        repeat {
            stream.pointee.next_out = output.baseAddress
            stream.pointee.avail_out = UInt32(output.count)
            status = deflate(stream, flush)
            // Z_STREAM_ERROR means a corrupted z_stream, a bug here, not bad data.
            precondition(status != Z_STREAM_ERROR, "deflate: inconsistent stream state")
            let produced = output.count - Int(stream.pointee.avail_out)
            if produced > 0 {
                try drain(UnsafeBufferPointer(rebasing: output[..<produced]))
            }
        } while stream.pointee.avail_out == 0
        precondition(stream.pointee.avail_in == 0, "deflate left input behind")
        precondition(!finish || status == Z_STREAM_END, "deflate did not finish the stream")
    }
}

extension GzipDeflater {
    /// Bytes went in since the member began (an empty member need not be ended at a checkpoint).
    var hasInputSinceMemberStart: Bool { stream.pointee.total_in > 0 }

    /// After a finished member: the next bytes start a new member (same level), so a file can be
    /// cut at a member boundary and appended to later (`OutputFile.checkpoint()`).
    func startNewMember() {
        // deflateReset also zeroes total_in: `hasInputSinceMemberStart` is per member.
        let status = deflateReset(stream)
        precondition(status == Z_OK, "deflateReset: inconsistent stream state")
    }
}

struct GzipDeflaterInitFailure: Error {
    var status: Int32
}
