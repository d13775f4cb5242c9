/// One non-blank audience line inside a batch buffer: where its bytes are and its 1-based line
/// number in the input file (blank lines counted), so every result can point back at it.
public struct AudienceLine: Sendable, Equatable {
    public var number: Int
    public var range: Range<Int>

    public init(number: Int, range: Range<Int>) {
        self.number = number
        self.range = range
    }
}
