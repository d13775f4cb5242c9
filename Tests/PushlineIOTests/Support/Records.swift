/// Deterministic audience lines whose text follows from their number, so a test can check any
/// line it gets back without keeping the input. Tokens are hash-derived hex so gzip has real work.
enum Records {
    static func line(_ number: Int) -> String {
        var state = UInt64(truncatingIfNeeded: number) &* 0x9E37_79B9_7F4A_7C15
        var token = ""
        for _ in 0..<4 {
            state ^= state >> 31
            state &*= 0xBF58_476D_1CE4_E5B9
            state ^= state >> 29
            let hex = String(state, radix: 16)
            token += String(repeating: "0", count: 16 - hex.count) + hex
        }
        return #"{"id":"c-\#(number)","customer":{"first_name":"Ana \#(number % 97)","points":\#(number * 7 % 1000)},"devices":[{"platform":"ios","token":"\#(token)"}]}"#
    }

    /// Lines 1...count joined by newlines (and a final one); every `blankEvery`-th line is blank.
    static func file(lines count: Int, blankEvery: Int? = nil, firstNumber: Int = 1) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(count * 160)
        for number in firstNumber..<(firstNumber + count) {
            if let blankEvery, number % blankEvery == 0 {
                bytes.append(0x0A)
                continue
            }
            bytes += line(number).utf8
            bytes.append(0x0A)
        }
        return bytes
    }

    /// The (number, text) pairs a reader should return for `file(lines:blankEvery:firstNumber:)`.
    static func expected(lines count: Int, blankEvery: Int? = nil, firstNumber: Int = 1) -> [Int] {
        (firstNumber..<(firstNumber + count)).filter { number in blankEvery.map { number % $0 != 0 } ?? true }
    }
}
