import NIOCore

/// Writes HTTP/2 frames as bytes under NIO's HTTP/2 handler, for what its state machine would
/// not let a well-behaved server do: a GOAWAY it does not know about (so later streams still
/// reach the counting handler) and a header block larger than any frame (HEADERS followed by
/// CONTINUATION frames).
final class RawFrameWriter: ChannelOutboundHandler, RemovableChannelHandler {
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private var context: ChannelHandlerContext?

    func handlerAdded(context: ChannelHandlerContext) { self.context = context }
    func handlerRemoved(context: ChannelHandlerContext) { self.context = nil }

    /// Writes and flushes `bytes` below the HTTP/2 handler; on the channel's event loop only.
    func write(_ bytes: [UInt8]) {
        guard let context else { return }
        context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(bytes: bytes)), promise: nil)
    }
}

/// Sits first in the pipeline, under TLS, so closing from here drops the TCP connection at
/// once: closing above NIO's TLS handler would send close_notify and wait for the client's
/// (up to 5 s), a polite ending rather than a lost connection.
final class ConnectionDropper: ChannelOutboundHandler, RemovableChannelHandler {
    typealias OutboundIn = ByteBuffer

    private var context: ChannelHandlerContext?

    func handlerAdded(context: ChannelHandlerContext) { self.context = context }
    func handlerRemoved(context: ChannelHandlerContext) { self.context = nil }

    /// Closes the socket; on the channel's event loop only.
    func drop() { context?.close(promise: nil) }
}

enum RawFrames {
    /// GOAWAY (type 7) on stream 0 with NO_ERROR.
    static func goaway(lastStreamID: Int32) -> [UInt8] {
        var bytes = header(length: 8, type: 0x7, flags: 0, stream: 0)
        bytes += bigEndian(UInt32(lastStreamID))
        bytes += bigEndian(0)
        return bytes
    }

    /// `:status: 200` and one header `name` whose value is `valueBytes` bytes of "~" (a
    /// literal without Huffman coding, not indexed), ending the stream, split into a HEADERS
    /// frame and CONTINUATION frames of at most 16,384 bytes (the default maximum frame size).
    static func oversizedHeaders(stream: Int32, name: String, valueBytes: Int) -> [UInt8] {
        headers(stream: stream, fields: [(name, [UInt8](repeating: UInt8(ascii: "~"), count: valueBytes))])
    }

    /// `:status: 200` and fields of 4,000 bytes of "~" (`x-filler-N`) until the header list's
    /// size (RFC 9113 §6.5.2: name + value + 32 per field, `:status` included) passes `limit` by
    /// at least 1,024 bytes, ending the stream. Every field decodes; only the total is too large.
    static func headerListOver(limit: Int, stream: Int32) -> [UInt8] {
        var fields: [(String, [UInt8])] = []
        var size = ":status".utf8.count + 3 + 32
        while size <= limit + 1_024 {
            let name = "x-filler-\(fields.count)"
            fields.append((name, [UInt8](repeating: UInt8(ascii: "~"), count: 4_000)))
            size += name.utf8.count + 4_000 + 32
        }
        return headers(stream: stream, fields: fields)
    }

    /// `:status: 200` and `fields` (literals without Huffman coding, not indexed, so the
    /// client's HPACK table is untouched), ending the stream, split into a HEADERS frame and
    /// CONTINUATION frames of at most 16,384 bytes (the default maximum frame size).
    static func headers(stream: Int32, fields: [(name: String, value: [UInt8])]) -> [UInt8] {
        // Indexed field 8 of the static table is ":status: 200".
        var block: [UInt8] = [0x88]
        for (name, value) in fields {
            block.append(0x00)
            block += integer(name.utf8.count, prefixBits: 7, firstByte: 0)
            block += Array(name.utf8)
            block += integer(value.count, prefixBits: 7, firstByte: 0)
            block += value
        }
        var frames: [UInt8] = []
        var offset = 0
        var first = true
        let maxFrame = 16_384
        while offset < block.count {
            let end = min(offset + maxFrame, block.count)
            let last = end == block.count
            // HEADERS carries END_STREAM (0x1); the last frame of the block END_HEADERS (0x4).
            let type: UInt8 = first ? 0x1 : 0x9
            var flags: UInt8 = first ? 0x1 : 0
            if last { flags |= 0x4 }
            frames += header(length: end - offset, type: type, flags: flags, stream: stream)
            frames += block[offset..<end]
            offset = end
            first = false
        }
        return frames
    }

    private static func header(length: Int, type: UInt8, flags: UInt8, stream: Int32) -> [UInt8] {
        [UInt8(truncatingIfNeeded: length >> 16), UInt8(truncatingIfNeeded: length >> 8), UInt8(truncatingIfNeeded: length), type, flags]
            + bigEndian(UInt32(stream) & 0x7FFF_FFFF)
    }

    private static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(truncatingIfNeeded: value >> 24), UInt8(truncatingIfNeeded: value >> 16), UInt8(truncatingIfNeeded: value >> 8), UInt8(truncatingIfNeeded: value)]
    }

    /// HPACK integer (RFC 7541 §5.1).
    private static func integer(_ value: Int, prefixBits: Int, firstByte: UInt8) -> [UInt8] {
        let limit = (1 << prefixBits) - 1
        guard value >= limit else { return [firstByte | UInt8(value)] }
        var bytes: [UInt8] = [firstByte | UInt8(limit)]
        var rest = value - limit
        while rest >= 128 {
            bytes.append(UInt8(rest & 0x7F) | 0x80)
            rest >>= 7
        }
        bytes.append(UInt8(rest))
        return bytes
    }
}
