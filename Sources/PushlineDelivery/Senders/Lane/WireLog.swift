/// Where a lane writes down, before its requests go on the wire, which devices they are for, and
/// which answers proved a device was not delivered. After a kill, a resume marks as possible
/// duplicates only the devices whose last record is a start and which have no result line: the
/// streams that were on the wire, and answers whose result line had not reached the kernel
/// (docs/resume.md, "Possible duplicates"). Devices still queued, or waiting for a retry after an
/// answer that proved them undelivered, are sent again unmarked.
///
/// `record` is called on the transfer thread, once per loop turn that has records, before that
/// turn's transfers start; it returns once the records reached the kernel, or after the log gave
/// up for good (a failed write removes the log, and a resume then falls back to the journal's
/// horizons for that provider: more marks, never a missed one).
public protocol WireLog: AnyObject, Sendable {
    func record(_ records: UnsafeBufferPointer<WireRecord>)
}

/// One record of a `WireLog`: a device of an input line, and whether a request for it is about to
/// go on the wire or got an answer proving it was not delivered. Stored as 8 bytes, little endian.
public struct WireRecord: Sendable, Equatable {
    public enum Kind: UInt8, Sendable {
        /// The provider answered with a status that is not 2xx, or refused the stream unprocessed.
        case notDelivered = 0
        /// A request for the device is about to go on the wire.
        case started = 1
    }

    public var line: Int
    public var device: UInt32
    public var kind: Kind

    public init(line: Int, device: UInt32, kind: Kind) {
        self.line = line
        self.device = device
        self.kind = kind
    }

    /// Device indexes at or above this share one value: a record for it covers them all (a
    /// resume then marks every such device of the line, conservatively).
    public static let deviceLimit: UInt32 = 0xFFFF
    /// Lines up to 2^47 - 1 (more than any audience has).
    public static let lineLimit = (1 << 47) - 1

    /// Bit 0: the kind; bits 1–16: the device (capped at `deviceLimit`); bits 17–63: the line.
    public var packed: UInt64 {
        let line = UInt64(Swift.min(Swift.max(self.line, 0), Self.lineLimit))
        return line << 17 | UInt64(Swift.min(device, Self.deviceLimit)) << 1 | UInt64(kind.rawValue)
    }

    public init(packed: UInt64) {
        self.init(line: Int(packed >> 17), device: UInt32((packed >> 1) & 0xFFFF), kind: packed & 1 == 1 ? .started : .notDelivered)
    }
}
