import CZlib

/// Reads one gzip member header (RFC 1952, 2.3.1) as its bytes arrive, however they are split:
/// the magic and method, the flags, then the optional extra field, name, comment and header CRC.
///
/// Ours rather than ISA-L's: ISA-L 2.30 miscounts the header CRC when a header arrives in pieces
/// (a two-byte read, a pipe) and refuses a valid file; and it waits for ten bytes before looking
/// at any, so junk after the last member would read as a truncated member instead of as junk.
struct GzipMemberHeader {
    enum Step: Equatable {
        /// More header bytes are needed.
        case needMore
        /// The header ended; the member's deflate data starts after the consumed bytes.
        case complete
        /// Not a gzip header (zlib's words for the fault); the consumed bytes end at the bad one.
        case invalid(String)
    }

    private enum Field {
        case fixed, extraLength, extra, name, comment, headerCRC
    }

    private static let fixedLength = 10
    private static let reservedFlags: UInt8 = 0xE0
    private static let flagHeaderCRC: UInt8 = 0x02
    private static let flagExtra: UInt8 = 0x04
    private static let flagName: UInt8 = 0x08
    private static let flagComment: UInt8 = 0x10

    private var field = Field.fixed
    /// Bytes read of the current field (fixed part, extra length, extra data, header CRC).
    private var position = 0
    private var flags: UInt8 = 0
    private var extraLength = 0
    private var storedCRC: UInt = 0
    /// CRC-32 of the header bytes before the header CRC (FHCRC stores its low 16 bits).
    private var crc: UInt = 0

    /// Consumes header bytes from `input`; returns the step and how many bytes it consumed.
    mutating func read(_ input: UnsafeBufferPointer<UInt8>) -> (step: Step, consumed: Int) {
        guard let base = input.baseAddress else { return (.needMore, 0) }
        var index = 0
        while index < input.count {
            let byte = input[index]
            if field == .headerCRC {
                storedCRC |= UInt(byte) << (8 * position)
                index += 1
                position += 1
                guard position == 2 else { continue }
                return storedCRC == crc & 0xFFFF ? (.complete, index) : (.invalid("header crc mismatch"), index)
            }
            var take = 1
            switch field {
            case .fixed:
                switch position {
                case 0 where byte != 0x1F, 1 where byte != 0x8B: return (.invalid("incorrect header check"), index)
                case 2 where byte != 0x08: return (.invalid("unknown compression method"), index)
                case 3 where byte & Self.reservedFlags != 0: return (.invalid("unknown header flags set"), index)
                case 3: flags = byte
                default: break
                }
            case .extraLength:
                extraLength |= Int(byte) << (8 * position)
            case .extra:
                // Skipped whole: at most 65,535 bytes, bounded by the field's own length.
                take = min(extraLength - position, input.count - index)
            case .name, .comment, .headerCRC:
                break
            }
            crc = CZlib.crc32(crc, base + index, UInt32(take))
            index += take
            position += take
            let fieldEnded: Bool
            switch field {
            case .fixed: fieldEnded = position == Self.fixedLength
            case .extraLength: fieldEnded = position == 2
            case .extra: fieldEnded = position == extraLength
            case .name, .comment: fieldEnded = byte == 0
            case .headerCRC: fieldEnded = false
            }
            if fieldEnded, advance() { return (.complete, index) }
        }
        return (.needMore, index)
    }

    /// Moves to the next field the flags call for; true when the header ended.
    private mutating func advance() -> Bool {
        position = 0
        switch field {
        case .fixed where flags & Self.flagExtra != 0:
            field = .extraLength
            return false
        case .extraLength where extraLength > 0:
            field = .extra
            return false
        case .fixed, .extraLength, .extra:
            if flags & Self.flagName != 0 {
                field = .name
                return false
            }
            fallthrough
        case .name:
            if flags & Self.flagComment != 0, field != .comment {
                field = .comment
                return false
            }
            fallthrough
        case .comment:
            if flags & Self.flagHeaderCRC != 0 {
                field = .headerCRC
                return false
            }
            return true
        case .headerCRC:
            return true
        }
    }
}
