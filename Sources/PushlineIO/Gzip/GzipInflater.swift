import CIsal

/// Streams gzip data (RFC 1952) through ISA-L's inflater, across any number of concatenated
/// members.
///
/// ISA-L rather than zlib: it inflates a generated audience in 0.88 s where zlib takes 1.5 s
/// (1,000,000 customers, 575 MB), and the reader's thread shares the machine with the encoders.
/// Each member's header is read by `GzipMemberHeader`, its deflate data and trailer by ISA-L
/// (which checks the CRC-32 and length). `cat a.gz b.gz` and pigz both produce several members;
/// a file is only whole when its last member ended, so after each member the next header is read
/// while input remains. Anything after a member that is not another gzip header is refused as
/// corrupt rather than silently ignored.
final class GzipInflater {
    struct Failure: Error {
        /// ISA-L's status (negative: the data is not valid gzip).
        var status: Int32
        /// What is wrong, such as "invalid distance too far back" or "incorrect data check".
        var message: String
        /// Input bytes not consumed when inflating stopped (locates the fault in the file).
        var unconsumedInput: Int
        var isDataError: Bool { status < 0 }
    }

    private let state: UnsafeMutablePointer<cisal_inflater>
    /// True between members: the last one ended and the next has not started.
    private(set) var atMemberBoundary = false
    /// The header being read; nil once the member's deflate data started.
    private var header: GzipMemberHeader? = GzipMemberHeader()

    init() throws(Failure) {
        guard let state = cisal_inflater_create() else {
            throw Failure(status: 0, message: "out of memory for the inflater", unconsumedInput: 0)
        }
        self.state = state
    }

    deinit { cisal_inflater_destroy(state) }

    /// Inflates from `input` into `output` until one of them is used up or the data is bad. A
    /// failure comes with the progress made before it, so output that was already good is not
    /// lost.
    func inflate(
        _ input: UnsafeBufferPointer<UInt8>, into output: UnsafeMutableBufferPointer<UInt8>
    ) -> (consumed: Int, produced: Int, failure: Failure?) {
        guard let inputBase = input.baseAddress, let outputBase = output.baseAddress, !input.isEmpty, !output.isEmpty else {
            return (0, 0, nil)
        }
        // The reader's buffers are at most 1 GiB (AudienceReader's precondition): UInt32 fits.
        var consumed = 0, produced = 0
        while consumed < input.count, produced < output.count {
            if atMemberBoundary {
                cisal_inflater_reset(state)
                atMemberBoundary = false
                header = GzipMemberHeader()
            }
            if header != nil {
                let (step, used) = header!.read(UnsafeBufferPointer(rebasing: input[consumed...]))
                consumed += used
                switch step {
                case .needMore:
                    continue
                case .complete:
                    header = nil
                case .invalid(let message):
                    return (consumed, produced, Failure(status: ISAL_INVALID_WRAPPER, message: message, unconsumedInput: input.count - consumed))
                }
                if consumed == input.count { break }
            }
            let offered = input.count - consumed
            var unread: UInt32 = 0, made: UInt32 = 0, ended: Int32 = 0
            let status = cisal_inflate(
                state, inputBase + consumed, UInt32(offered), outputBase + produced,
                UInt32(output.count - produced), &unread, &made, &ended)
            // ISA-L's counts are not to be trusted blindly: on some bad data it leaves the unread
            // count past what it was given (0xFFFFFFFF: a fuzz finding), and a consumed count
            // derived from it would be negative. Such a step consumed nothing we can name.
            guard Int(made) <= output.count - produced else {
                return (consumed, produced, Failure(status: min(status, ISAL_INVALID_BLOCK), message: "the inflater lost count of its output", unconsumedInput: offered))
            }
            produced += Int(made)
            guard Int(unread) <= offered else {
                let message = status < 0 ? Self.message(status) : "the inflater lost count of its input"
                return (consumed, produced, Failure(status: min(status, ISAL_INVALID_BLOCK), message: message, unconsumedInput: offered))
            }
            consumed += offered - Int(unread)
            if status < 0 {
                return (consumed, produced, Failure(status: status, message: Self.message(status), unconsumedInput: input.count - consumed))
            }
            if ended != 0 {
                atMemberBoundary = true
            } else if Int(unread) == offered, made == 0 {
                // Nothing moved, yet neither side is used up: not a state ISA-L should reach. A
                // failure, not a pause: the caller would hand over the same bytes again forever.
                return (consumed, produced, Failure(status: ISAL_INVALID_BLOCK, message: "the inflater made no progress", unconsumedInput: input.count - consumed))
            }
        }
        return (consumed, produced, nil)
    }

    /// Words for ISA-L's statuses, as zlib words the same faults.
    private static func message(_ status: Int32) -> String {
        switch status {
        case ISAL_INVALID_BLOCK: "invalid block"
        case ISAL_INVALID_SYMBOL: "invalid code"
        case ISAL_INVALID_LOOKBACK: "invalid distance too far back"
        case ISAL_INVALID_WRAPPER: "incorrect header check"
        case ISAL_UNSUPPORTED_METHOD: "unknown compression method"
        case ISAL_INCORRECT_CHECKSUM: "incorrect data check"
        default: "inflate status \(status)"
        }
    }
}
