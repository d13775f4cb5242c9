#if canImport(Glibc)
import Glibc
#endif
import FuzzSupport
import FuzzZlib
import PushlineIO

/// A gzip file read by `AudienceReader` (ISA-L for the deflate data, our own header parser) with
/// small buffers, and by zlib: the reader must accept exactly what zlib accepts, as concatenated
/// members, and when both accept, hand over the same lines. Input: one byte that picks the read
/// size (2 to 16 bytes, or 64 KiB), then the file without its first two bytes (the gzip magic,
/// always put back, so every input is read as gzip).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzAudienceGzip(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = FuzzInput.bytes(data, size)
    guard let selector = input.first else { return 0 }
    let file: [UInt8] = [0x1F, 0x8B] + input.dropFirst()
    // The reader takes 2 bytes at least (it looks at two to tell gzip from text).
    let readSize = selector < 240 ? Int(selector % 15) + 2 : 64 << 10
    let ours = readWithPushline(file, readBufferSize: readSize)
    let zlib = inflateWithZlib(file)
    // zlib refuses Huffman tables that are incomplete or oversubscribed even where they decode
    // the data; ISA-L decodes what they can. Such a member still passed its CRC-32 and length
    // check, so reading it loses nothing: the one refusal of zlib's the reader may not share.
    let zlibTableOnly = ["invalid code lengths set", "invalid literal/lengths set", "invalid distances set"].contains(zlib.error)
    check(ours.accepted == zlib.accepted || (ours.accepted && zlibTableOnly),
          "reader \(ours.accepted ? "accepted" : "refused (\(ours.error))") what zlib \(zlib.accepted ? "accepted" : "refused (\(zlib.error))"): \(escaped(file))")
    if ours.accepted, zlib.accepted {
        check(ours.uncompressed == zlib.output.count, "reader inflated \(ours.uncompressed) bytes, zlib \(zlib.output.count): \(escaped(file))")
        check(ours.lineBytes == linesOf(zlib.output), "the lines differ from zlib's output: \(escaped(file))")
    }
    return 0
}

/// The reader over a pipe holding the file (at most `max_len` bytes: within a pipe's buffer).
private func readWithPushline(_ file: [UInt8], readBufferSize: Int) -> (accepted: Bool, uncompressed: Int, lineBytes: [UInt8], error: String) {
    var ends: [Int32] = [0, 0]
    guard file.count <= 60_000, pipe(&ends) == 0 else { finding("no pipe for \(file.count) bytes") }
    defer { close(ends[0]) }
    let written = file.withUnsafeBytes { write(ends[1], $0.baseAddress, $0.count) }
    close(ends[1])
    guard written == file.count else { finding("could not write the pipe") }
    let fd = ends[0]
    let options = AudienceReader.Options(maxBatchLines: 7, maxLineBytes: 1 << 20, readBufferSize: readBufferSize, inflateBufferSize: 5)
    var lines: [UInt8] = []
    do throws(AudienceReadError) {
        var reader = try AudienceReader(fileDescriptor: fd, closesDescriptor: false, name: "fuzz", options: options)
        while let batch = try reader.nextBatch() {
            for line in batch.lines {
                lines += batch.buffer[line.range]
                lines.append(UInt8(ascii: "\n"))
            }
        }
        return (true, reader.uncompressedBytes, lines, "")
    } catch {
        return (false, 0, [], error.description)
    }
}

/// zlib over the whole file, member after member, as gzip reads concatenated files.
private func inflateWithZlib(_ file: [UInt8]) -> (accepted: Bool, output: [UInt8], error: String) {
    var stream = z_stream()
    guard fuzzzlib_inflate_init_gzip(&stream) == Z_OK else { finding("inflateInit2 failed") }
    defer { inflateEnd(&stream) }
    var output: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 1 << 16)
    return file.withUnsafeBufferPointer { input in
        stream.next_in = UnsafeMutablePointer(mutating: input.baseAddress)
        stream.avail_in = UInt32(input.count)
        while true {
            let status = chunk.withUnsafeMutableBufferPointer { out -> Int32 in
                stream.next_out = out.baseAddress
                stream.avail_out = UInt32(out.count)
                return inflate(&stream, Z_NO_FLUSH)
            }
            output += chunk[0..<(chunk.count - Int(stream.avail_out))]
            switch status {
            case Z_OK:
                if stream.avail_in == 0 && stream.avail_out > 0 { return (false, output, "truncated") }
            case Z_STREAM_END:
                if stream.avail_in == 0 { return (true, output, "") }
                inflateReset(&stream)
            case Z_BUF_ERROR:
                return (false, output, "truncated")
            default:
                return (false, output, stream.msg.map { String(cString: $0) } ?? "status \(status)")
            }
        }
    }
}

/// What the reader hands over for `text` (an independent statement of LineAssembler's rules):
/// its lines, each followed by a newline; a final line needs no newline; a CR before the LF and a
/// byte-order mark at the start of the first line are not part of a line; blank lines (spaces,
/// tabs, CRs only) are dropped.
private func linesOf(_ text: [UInt8]) -> [UInt8] {
    var pieces = text.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
    if text.last == UInt8(ascii: "\n") || text.isEmpty { pieces.removeLast() }
    var out: [UInt8] = []
    for (index, piece) in pieces.enumerated() {
        var line = piece
        if line.last == UInt8(ascii: "\r") { line = line.dropLast() }
        if index == 0, line.starts(with: [0xEF, 0xBB, 0xBF]) { line = line.dropFirst(3) }
        guard !line.allSatisfy({ [0x20, 0x09, 0x0D].contains($0) }) else { continue }
        out += line
        out.append(UInt8(ascii: "\n"))
    }
    return out
}
