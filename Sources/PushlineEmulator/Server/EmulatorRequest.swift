/// One HTTP/2 request as the endpoints see it: pseudo-headers split out, header names lower
/// case (HTTP/2 requires it), the body buffered up to the configured bound.
struct EmulatorRequest {
    var method: String
    var path: String
    var headers: [(name: String, value: String)]
    var body: [UInt8]
    /// The body was longer than `maxRequestBodyBytes`; `body` holds its first bytes only.
    var bodyTruncated: Bool

    /// The value of the only header called `name`; nil when absent.
    func header(_ name: String) -> String? {
        headers.first { $0.name == name }?.value
    }

    func count(_ name: String) -> Int {
        headers.reduce(0) { $0 + ($1.name == name ? 1 : 0) }
    }
}

/// What the stream handler does with a request.
struct EmulatorAnswer {
    enum Action {
        case respond(status: Int, headers: [(String, String)], body: [UInt8])
        /// RST_STREAM with REFUSED_STREAM.
        case refuseStream
        /// Close the connection without an answer.
        case dropConnection
    }

    var action: Action
    /// The request's credentials were accepted: the connection may widen its stream limit.
    var authenticated = false
    var latencyMilliseconds = 0

    static func json(_ status: Int, _ body: String, headers: [(String, String)] = []) -> EmulatorAnswer {
        EmulatorAnswer(action: .respond(status: status, headers: [("content-type", "application/json; charset=UTF-8")] + headers, body: Array(body.utf8)))
    }
}
