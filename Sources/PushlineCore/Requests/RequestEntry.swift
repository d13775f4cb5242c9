/// A range of a batch's byte arena: 32-bit offset and length, so an entry stays small and plain.
public struct ByteRange: Sendable, Hashable {
    public var offset: UInt32
    public var length: UInt32

    public init(offset: UInt32, length: UInt32) {
        self.offset = offset
        self.length = length
    }

    public static let empty = ByteRange(offset: 0, length: 0)

    /// The range `start..<end` of an arena, or nil when it does not fit 32 bits (an arena is one
    /// batch, a few megabytes: the check only keeps a hostile batch from trapping).
    @inlinable
    public init?(_ start: Int, _ end: Int) {
        guard start >= 0, end >= start, end <= Int(UInt32.max) else { return nil }
        self.offset = UInt32(truncatingIfNeeded: start)
        self.length = UInt32(truncatingIfNeeded: end &- start)
    }

    public var start: Int { Int(offset) }
    public var end: Int { Int(offset) &+ Int(length) }
    public var range: Range<Int> { start..<end }
    public var isEmpty: Bool { length == 0 }
}

/// Which route of the campaign's `RouteTable` a request goes through.
public struct RouteID: Sendable, Hashable, Comparable, CustomStringConvertible {
    public var rawValue: UInt16
    public init(_ rawValue: UInt16) { self.rawValue = rawValue }
    public var index: Int { Int(rawValue) }
    public static func < (a: RouteID, b: RouteID) -> Bool { a.rawValue < b.rawValue }
    public var description: String { "route \(rawValue)" }
}

/// Per-request flags.
public struct RequestFlags: OptionSet, Sendable, Hashable {
    public var rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    /// `on_oversize: truncate` shortened the text to fit (`"truncated": true` in the dry run).
    public static let truncated = RequestFlags(rawValue: 1 << 0)
    /// A Web Push message that could not be encrypted for its subscription (a `p256dh` that is
    /// not a P-256 point): its body is empty and the sender settles it without sending.
    public static let unsealed = RequestFlags(rawValue: 1 << 1)
    /// The body is an encrypted Web Push message (binary): a dry run with `--dry-run-encrypt`
    /// shows it in base64url.
    public static let sealed = RequestFlags(rawValue: 1 << 2)
}

/// One request of an encoded batch: where it came from, which route it takes, and where its
/// parts are in the batch's arena. Fixed-size plain integers (48 bytes): appending one costs no
/// allocation, and senders walk them without touching any object.
public struct RequestEntry: Sendable, Hashable {
    /// 1-based input line (blank lines counted).
    public var line: Int
    /// The device's index in the record's `devices` (0 for a flat line).
    public var device: UInt32
    public var route: RouteID
    public var flags: RequestFlags
    /// The record's `id` as JSON text (a string with its quotes, or a number), as the dry run
    /// writes it. Devices of one line share it.
    public var recipient: ByteRange
    /// Raw (unescaped) target text: the APNs / FCM / ADM token, the Web Push endpoint URL, the
    /// webhook address. For FCM it lies inside `body` (the message's `token`).
    public var target: ByteRange
    /// Exactly the bytes the provider receives (Web Push: the plaintext before encryption).
    public var body: ByteRange
    /// The per-request header block (`RequestHeaderBlock`): only headers whose value varies per
    /// device; the route's constant headers are in the `RouteTable`.
    public var headers: ByteRange

    public init(line: Int, device: UInt32, route: RouteID, flags: RequestFlags, recipient: ByteRange, target: ByteRange, body: ByteRange, headers: ByteRange) {
        self.line = line
        self.device = device
        self.route = route
        self.flags = flags
        self.recipient = recipient
        self.target = target
        self.body = body
        self.headers = headers
    }

    public var isTruncated: Bool { flags.contains(.truncated) }
}
