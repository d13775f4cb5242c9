/// Case mapping from bytes, shared by the Liquid and Handlebars flat programs (`downcase`,
/// `upcase`, `upper`, `lower`): ASCII by arithmetic, two-byte characters through the tables
/// built from `String.lowercased()` / `uppercased()`, and longer characters copied when their
/// case does not change. The programs hand anything else to their general renderer.
enum SimpleCasing {
    /// Whether `bytes` can be cased byte by byte exactly as `String.lowercased()` /
    /// `uppercased()` case them: ASCII, two-byte characters with a one-to-one two-byte mapping
    /// (`LiquidStringFilters.lowercaseTwoByte`), and longer characters the mapping leaves alone
    /// (CJK, emoji, scripts without case: copied as they are). Not a longer character that
    /// changes, nor ill-formed UTF-8.
    static func mappable(_ bytes: some Collection<UInt8>, upper: Bool) -> Bool {
        caseRuns(bytes, upper: upper, checked: false) { (_: UnsafeRawBufferPointer) throws(Never) in }
    }

    /// The bytes of one run: `emit` gets the text in runs of at most this many bytes.
    private static let runBytes = 256

    /// Writes `bytes` upper- or lowercased, in runs of a 256-byte stack buffer handed to `emit`:
    /// one limit check and one escape pass per run, not per byte, and a character is never split
    /// across two runs (`.jsonStringContent` escapes each run as UTF-8). Cased text is as many
    /// bytes as the input. False, with nothing emitted, when `mappable` would refuse the text.
    ///
    /// Text that fits one run (nearly every field) is checked as it is cased, in one pass: it is
    /// emitted only at the end, so a refusal midway has emitted nothing. Longer text is checked
    /// whole first, since a run handed to `emit` cannot be taken back.
    static func write<E: Error>(_ bytes: some Collection<UInt8>, upper: Bool, _ emit: (UnsafeRawBufferPointer) throws(E) -> Void) throws(E) -> Bool {
        if let ascii = bytes.withContiguousStorageIfAvailable({ writeASCII($0, upper: upper, emit) }), let done = ascii {
            return try done.get()
        }
        let checked = bytes.count > runBytes - 4
        if checked, !mappable(bytes, upper: upper) { return false }
        return try caseRuns(bytes, upper: upper, checked: checked, emit)
    }

    /// The common case on its own: ASCII text of one run (a name, a tier, a title). One pass
    /// finds no byte above 0x7F, a second flips the case bit of the letters (both loops the
    /// compiler vectorizes); `caseRuns` walks a UTF-8 state machine byte by byte. Nil when the
    /// text is longer or not ASCII. The standard library's closures do not throw typed errors,
    /// hence the `Result`.
    private static func writeASCII<E: Error>(
        _ bytes: UnsafeBufferPointer<UInt8>, upper: Bool, _ emit: (UnsafeRawBufferPointer) throws(E) -> Void
    ) -> Result<Bool, E>? {
        let count = bytes.count
        guard count <= runBytes else { return nil }
        var high: UInt8 = 0
        for byte in bytes { high |= byte }
        guard high < 0x80 else { return nil }
        guard count > 0 else { return .success(true) }
        // The letters to change: a–z for upper, A–Z for lower; they differ from their other case in bit 0x20.
        let first = upper ? UInt8(ascii: "a") : UInt8(ascii: "A")
        return withUnsafeTemporaryAllocation(byteCount: runBytes, alignment: 16) { buffer in
            for i in 0..<count {
                let byte = bytes[i]
                buffer[i] = byte &- first < 26 ? byte ^ 0x20 : byte
            }
            return Result { () throws(E) -> Bool in
                try emit(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
                return true
            }
        }
    }

    /// Cases `bytes` into runs handed to `emit`, checking each character as it goes; false at
    /// the first one that cannot be cased from its bytes. Runs go to `emit` only when the buffer
    /// fills (text longer than a run) and at the end, so text that fits one run emits nothing
    /// before a refusal. `checked`: `mappable` already accepted the text, so the Unicode
    /// property lookup of each longer character is not made twice.
    private static func caseRuns<E: Error>(
        _ bytes: some Collection<UInt8>, upper: Bool, checked: Bool, _ emit: (UnsafeRawBufferPointer) throws(E) -> Void
    ) throws(E) -> Bool {
        let chunk = runBytes
        let written: Result<Bool, E> = withUnsafeTemporaryAllocation(byteCount: chunk, alignment: 1) { buffer in
            var count = 0
            var lead: UInt8?
            // A longer character being copied: its value so far and the continuation bytes to come.
            var scalar: UInt32 = 0
            var pending = 0
            var length = 0
            var failure: E?
            func flush() {
                guard count > 0, failure == nil else { return }
                do throws(E) {
                    try emit(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
                } catch {
                    failure = error
                }
                count = 0
            }
            for byte in bytes {
                // Room for the longest run written without a flush: a four-byte character.
                if count > chunk - 4, lead == nil, pending == 0 {
                    flush()
                    if failure != nil { break }
                }
                if pending > 0 {
                    guard byte & 0xC0 == 0x80 else { return .success(false) }
                    buffer[count] = byte
                    count += 1
                    scalar = scalar << 6 | UInt32(byte & 0x3F)
                    pending -= 1
                    if pending == 0, !checked, !Self.keepsCase(scalar, length: length, upper: upper) { return .success(false) }
                } else if let first = lead {
                    guard byte & 0xC0 == 0x80, let mapped = Self.twoByteMapping(first, byte, upper: upper) else { return .success(false) }
                    buffer[count] = 0xC0 | UInt8(truncatingIfNeeded: mapped >> 6)
                    buffer[count + 1] = 0x80 | UInt8(truncatingIfNeeded: mapped & 0x3F)
                    count += 2
                    lead = nil
                } else if byte < 0x80 {
                    buffer[count] = upper ? (byte >= 0x61 && byte <= 0x7A ? byte - 32 : byte) : (byte >= 0x41 && byte <= 0x5A ? byte + 32 : byte)
                    count += 1
                } else if byte & 0xE0 == 0xC0 {
                    // A lead byte: held until its continuation byte comes.
                    lead = byte
                } else if byte & 0xF0 == 0xE0 || byte & 0xF8 == 0xF0 {
                    // Copied as it is once the whole character keeps its case.
                    buffer[count] = byte
                    count += 1
                    (scalar, pending, length) = byte & 0xF0 == 0xE0 ? (UInt32(byte & 0x0F), 2, 3) : (UInt32(byte & 0x07), 3, 4)
                } else {
                    return .success(false)
                }
            }
            guard lead == nil && pending == 0 else { return .success(false) }
            flush()
            return failure.map { .failure($0) } ?? .success(true)
        }
        return try written.get()
    }

    /// The cased scalar of the two-byte character `first`, `second`, when the mapping is one
    /// two-byte scalar too; nil for an overlong form or a character without such a mapping. The
    /// table is fetched here only, so ASCII text never touches it (a global's lazy-init check
    /// and a retain of the table per call, measured at about 1 % of a dry run).
    @inline(__always)
    private static func twoByteMapping(_ first: UInt8, _ second: UInt8, upper: Bool) -> UInt16? {
        let scalar = Int(first & 0x1F) << 6 | Int(second & 0x3F)
        guard scalar >= 0x80 else { return nil }
        let mapped = upper ? LiquidStringFilters.uppercaseTwoByte[scalar] : LiquidStringFilters.lowercaseTwoByte[scalar]
        return mapped == LiquidStringFilters.noSimpleMapping ? nil : mapped
    }

    /// A well-formed three- or four-byte character whose case mapping is itself (Unicode's
    /// Changes_When_Lowercased / Uppercased are false): `String.lowercased()` copies it.
    private static func keepsCase(_ value: UInt32, length: Int, upper: Bool) -> Bool {
        // Overlong forms and surrogates are not characters: the general renderer decides.
        guard length == 3 ? (0x800...0xFFFF).contains(value) : (0x10000...0x10FFFF).contains(value),
              let scalar = Unicode.Scalar(value)
        else { return false }
        return upper ? !scalar.properties.changesWhenUppercased : !scalar.properties.changesWhenLowercased
    }
}
