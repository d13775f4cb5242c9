import CZlib

/// Streams gzip data (RFC 1952) through zlib, across any number of concatenated members.
///
/// `cat a.gz b.gz` and pigz both produce several members; a file is only whole when its last
/// member ended, so after each `Z_STREAM_END` the stream is reset and inflating continues while
/// input remains. Anything after a member that is not another gzip header is refused as corrupt
/// rather than silently ignored. A class so the `z_stream` keeps a stable address (zlib's state
/// points back to it).
final class GzipInflater {
    struct Failure: Error {
        var status: Int32
        /// zlib's explanation, such as "invalid distance too far back" or "incorrect data check".
        var message: String
        /// Input bytes zlib had not consumed when it stopped (locates the fault in the file).
        var unconsumedInput: Int
        var isDataError: Bool { status == Z_DATA_ERROR || status == Z_NEED_DICT }
    }

    private let stream: UnsafeMutablePointer<z_stream>
    /// True between members: the last one ended and the next has not started.
    private(set) var atMemberBoundary = false

    init() throws(Failure) {
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        // 31 = 15-bit window + gzip wrapper only: we already know from the magic bytes it is gzip.
        let status = czlib_inflate_init2(stream, 31)
        guard status == Z_OK else {
            stream.deinitialize(count: 1)
            stream.deallocate()
            throw Failure(status: status, message: "inflateInit2 failed", unconsumedInput: 0)
        }
    }

    deinit {
        inflateEnd(stream)
        stream.deinitialize(count: 1)
        stream.deallocate()
    }

    /// Inflates from `input` into `output` until one of them is used up or zlib fails. A failure
    /// comes with the progress made before it, so output that was already good is not lost.
    func inflate(
        _ input: UnsafeBufferPointer<UInt8>, into output: UnsafeMutableBufferPointer<UInt8>
    ) -> (consumed: Int, produced: Int, failure: Failure?) {
        guard !input.isEmpty, !output.isEmpty else { return (0, 0, nil) }
        stream.pointee.next_in = UnsafeMutablePointer(mutating: input.baseAddress)
        stream.pointee.avail_in = UInt32(input.count)
        stream.pointee.next_out = output.baseAddress
        stream.pointee.avail_out = UInt32(output.count)
        defer {
            stream.pointee.next_in = nil
            stream.pointee.next_out = nil
        }
        var failure: Failure?
        while stream.pointee.avail_in > 0, stream.pointee.avail_out > 0 {
            if atMemberBoundary {
                inflateReset(stream)
                atMemberBoundary = false
            }
            let status = CZlib.inflate(stream, Z_NO_FLUSH)
            switch status {
            case Z_OK:
                continue
            case Z_STREAM_END:
                atMemberBoundary = true
            default:
                let message = stream.pointee.msg.map { String(cString: $0) } ?? "zlib status \(status)"
                failure = Failure(status: status, message: message, unconsumedInput: Int(stream.pointee.avail_in))
            }
            if failure != nil { break }
        }
        return (input.count - Int(stream.pointee.avail_in), output.count - Int(stream.pointee.avail_out), failure)
    }
}
