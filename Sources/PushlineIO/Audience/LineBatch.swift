/// A run of consecutive audience lines, as bytes.
///
/// All kept lines live in one contiguous `buffer` (terminators, a trailing `\r` and a leading BOM
/// stripped), so the next stage indexes them in place: `JSONDocument(buffer: batch.buffer,
/// range: line.range)` shares the buffer instead of copying the line.
public struct LineBatch: Sendable {
    /// One non-blank line: its 1-based physical line number in the input and its bytes in `buffer`.
    public struct Line: Sendable, Equatable {
        public var lineNumber: Int
        public var range: Range<Int>

        public init(lineNumber: Int, range: Range<Int>) {
            self.lineNumber = lineNumber
            self.range = range
        }
    }

    /// A line longer than `AudienceReader.Options.maxLineBytes`: skipped without being buffered,
    /// reported so the run turns it into a reject.
    public struct OversizeLine: Sendable, Equatable {
        public var lineNumber: Int
        /// The line's length without its terminator.
        public var byteLength: Int

        public init(lineNumber: Int, byteLength: Int) {
            self.lineNumber = lineNumber
            self.byteLength = byteLength
        }
    }

    /// The bytes of every line in `lines`, back to back.
    public let buffer: [UInt8]
    /// The non-blank lines that fit, in input order.
    public let lines: [Line]
    /// The lines that were too long, in input order.
    public let oversizeLines: [OversizeLine]
    /// The physical lines this batch accounts for, blank ones included. Consecutive batches tile
    /// the input without gaps, which is what resume and the final reconciliation rely on.
    public let lineNumbers: Range<Int>

    public init(buffer: [UInt8], lines: [Line], oversizeLines: [OversizeLine], lineNumbers: Range<Int>) {
        self.buffer = buffer
        self.lines = lines
        self.oversizeLines = oversizeLines
        self.lineNumbers = lineNumbers
    }

    /// The bytes of one line (a view into `buffer`, no copy).
    public subscript(line: Line) -> ArraySlice<UInt8> { buffer[line.range] }
}
