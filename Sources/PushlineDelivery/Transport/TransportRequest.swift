import PushlineCore

/// One HTTP/2 request as the transport sends it. It knows no provider: the sender builds the URL,
/// the header lines and the body.
///
/// Nothing per request is copied or allocated on the way to libcurl: the body, the URL's target
/// and the per-request header items point into memory the caller keeps alive and unchanged until
/// the request's completion arrives (`bodyOwner`, retained by the transport until then, so
/// passing the object that owns the bytes, a batch's arena, is enough); the constant header
/// lines are shared `TransportHeaderLines`, checked once; the transfer slot joins the URL and
/// links the header list in storage of its own.
public struct TransportRequest: @unchecked Sendable {
    /// The caller's id for this request; its completion carries it back.
    public var slot: UInt64
    public var method: TransportMethod
    /// The URL is `urlPrefix + urlTarget + urlSuffix`: `https://host[:port]/path` with the
    /// target (a device token) in the path, or whole in `urlPrefix`.
    var urlPrefix: String
    var urlTarget: UnsafeRawBufferPointer
    var urlSuffix: String
    /// Sent first, in order.
    var headers: TransportHeaderLines
    /// A `RequestHeaderBlock` in `bodyOwner`'s bytes: its items that are HTTP headers
    /// (`RequestHeaderID.httpName`) are sent after `headers`, the others are not sent.
    var headerItems: UnsafeRawBufferPointer
    /// Sent last (a credential's `authorization` line).
    var lastHeaders: TransportHeaderLines?
    public var body: UnsafeRawBufferPointer
    public var bodyOwner: AnyObject?
    /// Time allowed for the whole transfer, connection included; 0 means none (not advised).
    public var timeoutMilliseconds: Int

    /// A request whose URL and header lines are given whole. Header lines are `name: value`
    /// each, without CR or LF. Pass a `content-type`: libcurl otherwise sends
    /// `application/x-www-form-urlencoded` with a body.
    public init(
        slot: UInt64,
        method: TransportMethod = .post,
        url: String,
        headerLines: [String] = [],
        body: UnsafeRawBufferPointer = UnsafeRawBufferPointer(start: nil, count: 0),
        bodyOwner: AnyObject? = nil,
        timeoutMilliseconds: Int = 30_000
    ) {
        self.init(
            slot: slot, method: method, urlPrefix: url, urlTarget: UnsafeRawBufferPointer(start: nil, count: 0), urlSuffix: "",
            headers: TransportHeaderLines(headerLines), headerItems: UnsafeRawBufferPointer(start: nil, count: 0), lastHeaders: nil,
            body: body, bodyOwner: bodyOwner, timeoutMilliseconds: timeoutMilliseconds
        )
    }

    /// A request made of shared parts and ranges of `bodyOwner`'s bytes (a lane's requests).
    init(
        slot: UInt64, method: TransportMethod, urlPrefix: String, urlTarget: UnsafeRawBufferPointer, urlSuffix: String,
        headers: TransportHeaderLines, headerItems: UnsafeRawBufferPointer, lastHeaders: TransportHeaderLines?,
        body: UnsafeRawBufferPointer, bodyOwner: AnyObject?, timeoutMilliseconds: Int
    ) {
        self.slot = slot
        self.method = method
        self.urlPrefix = urlPrefix
        self.urlTarget = urlTarget
        self.urlSuffix = urlSuffix
        self.headers = headers
        self.headerItems = headerItems
        self.lastHeaders = lastHeaders
        self.body = body
        self.bodyOwner = bodyOwner
        self.timeoutMilliseconds = timeoutMilliseconds
    }

    /// The limits every engine holds a request to (`HTTP2Transport.check` refuses a request
    /// beyond them before it is taken): the longest URL, the most header lines, and the bytes of
    /// its per-request header lines.
    static let maxURLBytes = 8192
    static let maxHeaderLines = 64
    static let maxHeaderItemBytes = 8192

    /// The full URL (for messages and tests; the transport joins it without a `String`).
    public var url: String {
        urlPrefix + String(decoding: urlTarget, as: UTF8.self) + urlSuffix
    }

    /// The URL's length in bytes.
    var urlByteCount: Int {
        urlPrefix.utf8.count &+ urlTarget.count &+ urlSuffix.utf8.count
    }

    /// Every header line in the order they are sent (for tests).
    public var headerLines: [String] {
        var lines = headers.lines
        forEachHeaderItem { name, value in lines.append(name + ": " + String(decoding: value, as: UTF8.self)) }
        if let lastHeaders { lines += lastHeaders.lines }
        return lines
    }

    /// The header items that are sent: how many lines, the bytes they take as C strings, and
    /// whether one holds CR, LF or NUL. What the check refuses and the slot sizes its storage by.
    var headerItemsMeasure: (lines: Int, bytes: Int, holdsControl: Bool) {
        var measure = (lines: 0, bytes: 0, holdsControl: false)
        forEachHeaderItem { name, value in
            measure.lines &+= 1
            measure.bytes &+= name.utf8.count &+ 2 &+ value.count &+ 1
            if TransportHeaderLines.holdsControl(value) { measure.holdsControl = true }
        }
        return measure
    }

    /// Calls `body` with each item of `headerItems` that is an HTTP header.
    func forEachHeaderItem(_ body: (String, UnsafeRawBufferPointer) -> Void) {
        guard !headerItems.isEmpty else { return }
        RequestHeaderBlock.forEach(in: headerItems, block: ByteRange(0, headerItems.count) ?? .empty) { id, value in
            guard let name = id.httpName else { return }
            body(name, value)
        }
    }
}

/// Header lines as C strings, checked once: a route's constant lines or a credential's
/// `authorization` line, shared by every request that carries them. libcurl reads a request's
/// header list during its transfer without copying it, so the lines stay where they are.
public final class TransportHeaderLines: @unchecked Sendable {
    public let lines: [String]
    /// Why no request may carry these lines; nil when they are fine.
    let problem: String?
    /// Every line, each NUL-terminated, one after the other. Never written after `init`.
    private let storage: UnsafeMutablePointer<CChar>
    private let starts: [Int]

    public init(_ lines: [String]) {
        self.lines = lines
        var starts: [Int] = []
        var total = 0
        for line in lines {
            starts.append(total)
            total += line.utf8.count + 1
        }
        self.starts = starts
        storage = .allocate(capacity: Swift.max(total, 1))
        for (index, line) in lines.enumerated() {
            var position = starts[index]
            Self.copy(line.utf8, to: storage, at: &position)
            storage[position] = 0
        }
        problem = lines.contains { Self.holdsControl($0.utf8) } ? "a header line holds CR, LF or NUL" : nil
    }

    deinit { storage.deallocate() }

    var count: Int { starts.count }

    /// Line `index` as a C string; valid while this object lives.
    func cString(at index: Int) -> UnsafeMutablePointer<CChar> {
        storage + starts[index]
    }

    /// Whether `bytes` hold NUL, CR or LF: what would end a C string or split a header line.
    /// A mask test per byte, no early exit: every request's URL and items go through it.
    static func holdsControl<Bytes: Sequence<UInt8>>(_ bytes: Bytes) -> Bool {
        var found: UInt32 = 0
        for byte in bytes {
            // Bits 0, 10 and 13: NUL, LF, CR; a byte of 14 or more shifts the mask to nothing.
            found |= (0x2401 as UInt32) >> UInt32(Swift.min(byte, 31)) & 1
        }
        return found != 0
    }

    /// Copies `bytes` to `buffer` from `position`, which it advances (the caller made the room).
    static func copy<Bytes: Sequence<UInt8>>(_ bytes: Bytes, to buffer: UnsafeMutablePointer<CChar>, at position: inout Int) {
        for byte in bytes {
            buffer[position] = CChar(bitPattern: byte)
            position &+= 1
        }
    }
}

/// The request method. GET sends no body; the others send `body` (possibly empty).
public struct TransportMethod: Sendable, Equatable {
    let name: String
    private init(_ name: String) { self.name = name }
    public static let get = TransportMethod("GET")
    public static let post = TransportMethod("POST")
    public static let put = TransportMethod("PUT")
    public static let delete = TransportMethod("DELETE")
}
