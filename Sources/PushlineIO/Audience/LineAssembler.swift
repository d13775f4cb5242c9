#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Cuts a byte stream, fed in chunks of any size, into lines and packs them into `LineBatch`es.
///
/// Each byte is copied once, from the chunk into the batch buffer; line ends are found with
/// `memchr`. A line that grows past the limit is dropped from the buffer as soon as that is known
/// and the rest of it is only counted, so one huge line never costs more than `maxLineBytes`.
struct LineAssembler {
    let maxLineBytes: Int
    let maxBatchLines: Int
    let maxBatchBytes: Int

    /// Complete lines, then the line being assembled from `lineStart` on.
    private var buffer: [UInt8] = []
    private var lines: [LineBatch.Line] = []
    private var oversizeLines: [LineBatch.OversizeLine] = []
    private var lineStart = 0
    /// First physical line the current batch accounts for.
    private var batchFirstLineNumber = 1
    /// The physical line being assembled.
    private var lineNumber = 1
    /// While skipping an oversize line: its length so far, and whether its last byte was `\r`.
    private var skippedLength: Int?
    private var skippedEndsWithCR = false

    init(maxLineBytes: Int, maxBatchLines: Int, maxBatchBytes: Int) {
        precondition(maxLineBytes > 0 && maxBatchLines > 0 && maxBatchBytes > 0, "limits must be positive")
        self.maxLineBytes = maxLineBytes
        self.maxBatchLines = maxBatchLines
        self.maxBatchBytes = maxBatchBytes
        buffer.reserveCapacity(initialCapacity)
    }

    /// Physical lines completed so far (blank and oversize ones included).
    var completedLineCount: Int { lineNumber - 1 }

    /// Whether the current batch has reached a limit and should be taken before more input.
    var isFull: Bool {
        lines.count + oversizeLines.count >= maxBatchLines || lineStart >= maxBatchBytes
    }

    /// Consumes `chunk` up to its end or until the batch is full; returns how many bytes it used.
    mutating func consume(_ chunk: UnsafeBufferPointer<UInt8>) -> Int {
        guard let base = chunk.baseAddress else { return 0 }
        var position = 0
        while position < chunk.count && !isFull {
            let newline = memchr(base + position, 0x0A, chunk.count - position)
            let pieceEnd = newline.map { UnsafeRawPointer($0) - UnsafeRawPointer(base) } ?? chunk.count
            let piece = UnsafeBufferPointer(rebasing: chunk[position..<pieceEnd])
            position = newline == nil ? pieceEnd : pieceEnd + 1

            if skippedLength != nil {
                skip(piece)
                if newline != nil { finishOversizeLine() }
                continue
            }
            let length = buffer.count - lineStart + piece.count
            if newline != nil {
                let endsWithCR = piece.last.map { $0 == cr } ?? (buffer.count > lineStart && buffer.last == cr)
                if length - (endsWithCR ? 1 : 0) > maxLineBytes {
                    buffer.removeSubrange(lineStart...)
                    skippedLength = length
                    skippedEndsWithCR = endsWithCR
                    finishOversizeLine()
                } else {
                    buffer.append(contentsOf: piece)
                    finishLine()
                }
            } else if length > maxLineBytes + 1 {
                // Over the limit even if a `\r` turns out to end it: stop keeping it.
                let endsWithCR = piece.last == cr
                buffer.removeSubrange(lineStart...)
                skippedLength = length
                skippedEndsWithCR = endsWithCR
            } else {
                buffer.append(contentsOf: piece)
            }
        }
        return position
    }

    /// Ends the input: a final line without a newline still counts.
    mutating func finishInput() {
        if skippedLength != nil {
            finishOversizeLine()
        } else if buffer.count > lineStart {
            finishLine()
        }
    }

    /// Hands over the lines completed so far (nil when none since the last batch); a partial line
    /// moves to the next batch's buffer.
    mutating func takeBatch() -> LineBatch? {
        guard lineNumber > batchFirstLineNumber else { return nil }
        var next: [UInt8] = []
        next.reserveCapacity(Swift.max(initialCapacity, buffer.count - lineStart))
        next.append(contentsOf: buffer[lineStart...])
        buffer.removeSubrange(lineStart...)   // trims the tail in place: the batch bytes are not copied
        let batch = LineBatch(
            buffer: buffer,
            lines: lines,
            oversizeLines: oversizeLines,
            lineNumbers: batchFirstLineNumber..<lineNumber
        )
        buffer = next
        lines.removeAll(keepingCapacity: true)
        oversizeLines.removeAll(keepingCapacity: true)
        lineStart = 0
        batchFirstLineNumber = lineNumber
        return batch
    }

    private var initialCapacity: Int { maxBatchBytes + maxBatchBytes / 8 }

    private mutating func skip(_ piece: UnsafeBufferPointer<UInt8>) {
        skippedLength! += piece.count
        if let last = piece.last { skippedEndsWithCR = last == cr }
    }

    private mutating func finishOversizeLine() {
        let length = skippedLength! - (skippedEndsWithCR ? 1 : 0)
        oversizeLines.append(LineBatch.OversizeLine(lineNumber: lineNumber, byteLength: length))
        skippedLength = nil
        skippedEndsWithCR = false
        lineNumber += 1
    }

    /// Records the line in `buffer[lineStart...]`, stripping `\r` and a leading BOM, dropping it if blank.
    private mutating func finishLine() {
        if buffer.count > lineStart, buffer.last == cr { buffer.removeLast() }
        var start = lineStart
        if lineNumber == 1, buffer.count - start >= 3,
           buffer[start] == 0xEF, buffer[start + 1] == 0xBB, buffer[start + 2] == 0xBF {
            start += 3
        }
        if isBlank(start..<buffer.count) {
            buffer.removeSubrange(lineStart...)
        } else {
            lines.append(LineBatch.Line(lineNumber: lineNumber, range: start..<buffer.count))
            lineStart = buffer.count
        }
        lineNumber += 1
    }

    /// Empty or JSON whitespace only. Real lines start with `{`, so this usually looks at one byte.
    private func isBlank(_ range: Range<Int>) -> Bool {
        for index in range {
            switch buffer[index] {
            case 0x20, 0x09, 0x0D, 0x0A: continue
            default: return false
            }
        }
        return true
    }
}

private let cr: UInt8 = 0x0D
