/// What a per-request header block item is. Most are HTTP headers; some are inputs the sender
/// needs that are not headers (Web Push subscription keys), or the dry run's exact text of a
/// value the input wrote with escapes.
public struct RequestHeaderID: Sendable, Hashable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// `apns-collapse-id` (personalized, at most 64 bytes).
    public static let apnsCollapseID = RequestHeaderID(rawValue: 1)
    /// Web Push `keys.p256dh` (base64url, 65 bytes decoded): the sender encrypts to it.
    public static let webPushP256dh = RequestHeaderID(rawValue: 2)
    /// Web Push `keys.auth` (base64url, 16 bytes decoded).
    public static let webPushAuth = RequestHeaderID(rawValue: 3)
    /// The JSON text the dry run shows for the target (Web Push endpoint) when the input wrote it
    /// with escapes (`https:\/\/…`); absent otherwise, and never sent.
    public static let dryRunTargetText = RequestHeaderID(rawValue: 4)
    /// The JSON text the dry run shows for an open channel's platform when the input wrote it
    /// with escapes; absent otherwise, and never sent.
    public static let dryRunPlatformText = RequestHeaderID(rawValue: 5)
    /// The `authorization` value a sending run would add (Web Push VAPID), shown by a dry run
    /// with `--dry-run-encrypt`; never sent from here (the lane adds its own).
    public static let dryRunAuthorization = RequestHeaderID(rawValue: 6)

    /// The HTTP header name, for items that are headers.
    public var httpName: String? {
        switch self {
        case .apnsCollapseID: "apns-collapse-id"
        default: nil
        }
    }

    public var description: String {
        switch self {
        case .apnsCollapseID: "apns-collapse-id"
        case .webPushP256dh: "webpush-p256dh"
        case .webPushAuth: "webpush-auth"
        case .dryRunTargetText: "dry-run-target-text"
        case .dryRunPlatformText: "dry-run-platform-text"
        case .dryRunAuthorization: "dry-run-authorization"
        default: "header-\(rawValue)"
        }
    }
}

/// The per-request header block: items of `[id: 1 byte][length: 2 bytes, little endian][value]`
/// appended to the arena, so a request's varying headers are one range and no object.
public enum RequestHeaderBlock {
    /// Longest value an item holds.
    public static let maxValueBytes = Int(UInt16.max)

    /// Appends one item; false (nothing written) when the value is longer than `maxValueBytes`.
    @discardableResult
    public static func append(_ id: RequestHeaderID, value: UnsafeRawBufferPointer, to writer: inout JSONWriter) -> Bool {
        guard value.count <= maxValueBytes else { return false }
        writer.appendRaw(byte: id.rawValue)
        writer.appendRaw(byte: UInt8(truncatingIfNeeded: value.count))
        writer.appendRaw(byte: UInt8(truncatingIfNeeded: value.count >> 8))
        writer.appendRaw(value)
        return true
    }

    /// Calls `body` with each item of `block` (a range of `arena`) in order. A malformed block
    /// (only from a corrupted arena) ends the walk instead of reading past the range.
    public static func forEach(
        in arena: UnsafeRawBufferPointer, block: ByteRange,
        _ body: (RequestHeaderID, UnsafeRawBufferPointer) -> Void
    ) {
        guard block.end <= arena.count else { return }
        var position = block.start
        let end = block.end
        while end &- position >= 3 {
            let id = RequestHeaderID(rawValue: arena[position])
            let length = Int(arena[position &+ 1]) | Int(arena[position &+ 2]) << 8
            let valueStart = position &+ 3
            guard end &- valueStart >= length else { return }
            body(id, UnsafeRawBufferPointer(rebasing: arena[valueStart..<(valueStart &+ length)]))
            position = valueStart &+ length
        }
    }

    /// The value of item `id` in `block`, if present (first occurrence).
    public static func value(_ id: RequestHeaderID, in arena: UnsafeRawBufferPointer, block: ByteRange) -> UnsafeRawBufferPointer? {
        var found: UnsafeRawBufferPointer?
        forEach(in: arena, block: block) { item, value in
            if found == nil, item == id { found = value }
        }
        return found
    }
}
