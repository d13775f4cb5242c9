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
        let table = upper ? LiquidStringFilters.uppercaseTwoByte : LiquidStringFilters.lowercaseTwoByte
        var lead: UInt8?
        // A longer character being decoded: its value so far and the continuation bytes to come.
        var scalar: UInt32 = 0
        var pending = 0
        var length = 0
        for byte in bytes {
            if pending > 0 {
                guard byte & 0xC0 == 0x80 else { return false }
                scalar = scalar << 6 | UInt32(byte & 0x3F)
                pending -= 1
                if pending == 0, !Self.keepsCase(scalar, length: length, upper: upper) { return false }
            } else if let first = lead {
                guard byte & 0xC0 == 0x80 else { return false }
                let scalar = Int(first & 0x1F) << 6 | Int(byte & 0x3F)
                guard scalar >= 0x80, table[scalar] != LiquidStringFilters.noSimpleMapping else { return false }
                lead = nil
            } else if byte < 0x80 {
                continue
            } else if byte & 0xE0 == 0xC0 {
                lead = byte
            } else if byte & 0xF0 == 0xE0 {
                (scalar, pending, length) = (UInt32(byte & 0x0F), 2, 3)
            } else if byte & 0xF8 == 0xF0 {
                (scalar, pending, length) = (UInt32(byte & 0x07), 3, 4)
            } else {
                return false
            }
        }
        return lead == nil && pending == 0
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
