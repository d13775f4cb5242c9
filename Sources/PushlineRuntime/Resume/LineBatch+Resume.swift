import PushlineIO

extension LineBatch {
    /// The batch's lines through `line` and after it (either nil when empty), sharing the buffer:
    /// a resume skips the first part (`EncodeStage`).
    func split(after line: Int) -> (through: LineBatch?, after: LineBatch?) {
        if lineNumbers.lowerBound > line { return (nil, self) }
        if lineNumbers.upperBound - 1 <= line { return (self, nil) }
        let cut = line + 1
        let through = LineBatch(
            buffer: buffer, lines: lines.filter { $0.lineNumber < cut }, oversizeLines: oversizeLines.filter { $0.lineNumber < cut },
            lineNumbers: lineNumbers.lowerBound..<cut
        )
        let after = LineBatch(
            buffer: buffer, lines: lines.filter { $0.lineNumber >= cut }, oversizeLines: oversizeLines.filter { $0.lineNumber >= cut },
            lineNumbers: cut..<lineNumbers.upperBound
        )
        return (through, after)
    }
}
