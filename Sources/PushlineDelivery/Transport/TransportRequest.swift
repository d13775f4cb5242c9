/// One HTTP/2 request as the transport sends it. It knows no provider: the sender builds the URL,
/// the header lines and the body.
///
/// The body is not copied: `body` points into memory the caller keeps alive and unchanged until
/// the request's completion arrives. `bodyOwner` is retained by the transport until then, so
/// passing the object that owns the bytes (a batch's arena) is enough.
public struct TransportRequest: @unchecked Sendable {
    /// The caller's id for this request; its completion carries it back.
    public var slot: UInt64
    public var method: TransportMethod
    /// The full URL, `https://host[:port]/path`.
    public var url: String
    /// Header lines, `name: value` each, without CR or LF. Pass a `content-type`: libcurl
    /// otherwise sends `application/x-www-form-urlencoded` with a body.
    public var headerLines: [String]
    public var body: UnsafeRawBufferPointer
    public var bodyOwner: AnyObject?
    /// Time allowed for the whole transfer, connection included; 0 means none (not advised).
    public var timeoutMilliseconds: Int

    public init(
        slot: UInt64,
        method: TransportMethod = .post,
        url: String,
        headerLines: [String] = [],
        body: UnsafeRawBufferPointer = UnsafeRawBufferPointer(start: nil, count: 0),
        bodyOwner: AnyObject? = nil,
        timeoutMilliseconds: Int = 30_000
    ) {
        self.slot = slot
        self.method = method
        self.url = url
        self.headerLines = headerLines
        self.body = body
        self.bodyOwner = bodyOwner
        self.timeoutMilliseconds = timeoutMilliseconds
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
