import NIOConcurrencyHelpers
import NIOCore
import NIOHPACK
import NIOHTTP2
import NIOPosix
import NIOSSL

/// A SwiftNIO HTTP/2 client over TLS for what curl cannot show: the SETTINGS and GOAWAY frames
/// the server sends, RST_STREAM codes, a connection closed under a request, and many requests
/// multiplexed on one connection.
final class H2TestClient: Sendable {
    enum Outcome: Sendable, Equatable {
        case response(status: Int, headers: [String: String], body: String)
        case reset(HTTP2ErrorCode)
        /// The stream ended without an answer (connection closed).
        case closed

        var status: Int? {
            if case .response(let status, _, _) = self { return status }
            return nil
        }

        var reason: String? {
            guard case .response(_, _, let body) = self else { return nil }
            guard let start = body.range(of: "\"reason\":\"") else { return nil }
            let rest = body[start.upperBound...]
            return rest.firstIndex(of: "\"").map { String(rest[..<$0]) }
        }
    }

    let channel: any Channel
    private let multiplexer: NIOHTTP2Handler.StreamMultiplexer
    private let frames: NIOLockedValueBox<[HTTP2Frame.FramePayload]>
    private let group: any EventLoopGroup

    private init(channel: any Channel, multiplexer: NIOHTTP2Handler.StreamMultiplexer, frames: NIOLockedValueBox<[HTTP2Frame.FramePayload]>, group: any EventLoopGroup) {
        self.channel = channel
        self.multiplexer = multiplexer
        self.frames = frames
        self.group = group
    }

    static let group = MultiThreadedEventLoopGroup.singleton

    static func connect(port: Int, certificatePEM: String) async throws -> H2TestClient {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .certificates([try NIOSSLCertificate(bytes: Array(certificatePEM.utf8), format: .pem)])
        tls.applicationProtocols = ["h2"]
        let context = try NIOSSLContext(configuration: tls)
        let frames = NIOLockedValueBox<[HTTP2Frame.FramePayload]>([])
        let multiplexerBox = NIOLockedValueBox<NIOHTTP2Handler.StreamMultiplexer?>(nil)
        // Everything is installed before the first read: the server's SETTINGS may arrive with
        // the end of the TLS handshake.
        let bootstrap = ClientBootstrap(group: group).channelInitializer { channel in
            channel.eventLoop.makeCompletedFuture {
                let sync = channel.pipeline.syncOperations
                try sync.addHandler(NIOSSLClientHandler(context: context, serverHostname: "localhost"))
                let mux = try sync.configureHTTP2Pipeline(
                    mode: .client, connectionConfiguration: .init(), streamConfiguration: .init()
                ) { stream in stream.eventLoop.makeSucceededVoidFuture() }
                try sync.addHandler(RootFrameRecorder(frames: frames))
                multiplexerBox.withLockedValue { $0 = mux }
            }
        }
        let channel = try await bootstrap.connect(host: "127.0.0.1", port: port).get()
        guard let multiplexer = multiplexerBox.withLockedValue({ $0 }) else { throw RequestTimedOut(path: "connect", limits: []) }
        return H2TestClient(channel: channel, multiplexer: multiplexer, frames: frames, group: group)
    }

    /// Frames the server sent on stream 0 (SETTINGS, GOAWAY, …), in order.
    var rootFrames: [HTTP2Frame.FramePayload] { frames.withLockedValue { $0 } }

    /// The SETTINGS_MAX_CONCURRENT_STREAMS values the server announced, in order.
    var announcedStreamLimits: [Int] {
        rootFrames.compactMap { frame in
            guard case .settings(.settings(let settings)) = frame else { return nil }
            return settings.last { $0.parameter == .maxConcurrentStreams }?.value
        }
    }

    var goawayLastStreamIDs: [Int] {
        rootFrames.compactMap { frame in
            guard case .goAway(let last, _, _) = frame else { return nil }
            return Int(last)
        }
    }

    func request(_ method: String, _ path: String, headers: [(String, String)] = [], body: [UInt8] = []) async throws -> Outcome {
        let promise = channel.eventLoop.makePromise(of: Outcome.self)
        let completion = OutcomeCompletion(promise: promise)
        // A test must fail, not hang, when the server never answers.
        let timeout = channel.eventLoop.scheduleTask(in: .seconds(120)) { completion.complete(.failure(RequestTimedOut(path: path, limits: self.announcedStreamLimits))) }
        promise.futureResult.whenComplete { _ in timeout.cancel() }
        let stream = try await multiplexer.createStreamChannel { stream in
            stream.eventLoop.makeCompletedFuture {
                try stream.pipeline.syncOperations.addHandler(ResponseCollector(completion: completion))
            }
        }.get()
        var head = HPACKHeaders([(":method", method), (":path", path), (":scheme", "https"), (":authority", "127.0.0.1")])
        for (name, value) in headers { head.add(name: name, value: value) }
        let bodyBuffer = ByteBuffer(bytes: body)
        let requestHead = head
        try await stream.eventLoop.submit {
            stream.write(HTTP2Frame.FramePayload.headers(.init(headers: requestHead, endStream: body.isEmpty)), promise: nil)
            if !body.isEmpty {
                stream.write(HTTP2Frame.FramePayload.data(.init(data: .byteBuffer(bodyBuffer), endStream: true)), promise: nil)
            }
            stream.flush()
        }.get()
        return try await promise.futureResult.get()
    }

    /// Sends `requests` in one event-loop turn (no task scheduling between them) and returns
    /// their outcomes with the order in which the answers arrived (0 first).
    func sendTogether(_ requests: [(method: String, path: String, headers: [(String, String)], body: [UInt8])]) async throws -> [(outcome: Outcome, arrival: Int)] {
        let arrivals = NIOLockedValueBox(0)
        let multiplexer = self.multiplexer
        let loop = channel.eventLoop
        let futures = try await loop.submit { () -> [EventLoopFuture<(outcome: Outcome, arrival: Int)>] in
            requests.map { request in
                let promise = loop.makePromise(of: Outcome.self)
                let completion = OutcomeCompletion(promise: promise)
                let timeout = loop.scheduleTask(in: .seconds(120)) { completion.complete(.failure(RequestTimedOut(path: request.path, limits: []))) }
                var head = HPACKHeaders([(":method", request.method), (":path", request.path), (":scheme", "https"), (":authority", "127.0.0.1")])
                for (name, value) in request.headers { head.add(name: name, value: value) }
                let requestHead = head
                let streamPromise = loop.makePromise(of: (any Channel).self)
                multiplexer.createStreamChannel(promise: streamPromise) { stream in
                    stream.eventLoop.makeCompletedFuture {
                        try stream.pipeline.syncOperations.addHandler(ResponseCollector(completion: completion))
                    }
                }
                streamPromise.futureResult.whenSuccess { stream in
                    stream.write(HTTP2Frame.FramePayload.headers(.init(headers: requestHead, endStream: request.body.isEmpty)), promise: nil)
                    if !request.body.isEmpty {
                        stream.write(HTTP2Frame.FramePayload.data(.init(data: .byteBuffer(ByteBuffer(bytes: request.body)), endStream: true)), promise: nil)
                    }
                    stream.flush()
                }
                return promise.futureResult.map { outcome in
                    timeout.cancel()
                    let arrival = arrivals.withLockedValue { count in
                        defer { count += 1 }
                        return count
                    }
                    return (outcome: outcome, arrival: arrival)
                }
            }
        }.get()
        var results: [(outcome: Outcome, arrival: Int)] = []
        for future in futures { results.append(try await future.get()) }
        return results
    }

    func close() async {
        try? await channel.close()
    }
}

struct RequestTimedOut: Error {
    var path: String
    var limits: [Int]
}

/// Keeps the root-stream frames the HTTP/2 handler passes up.
private final class RootFrameRecorder: ChannelInboundHandler, Sendable {
    typealias InboundIn = HTTP2Frame
    let frames: NIOLockedValueBox<[HTTP2Frame.FramePayload]>

    init(frames: NIOLockedValueBox<[HTTP2Frame.FramePayload]>) {
        self.frames = frames
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        frames.withLockedValue { $0.append(frame.payload) }
    }
}

private final class ResponseCollector: ChannelInboundHandler {
    typealias InboundIn = HTTP2Frame.FramePayload
    private let completion: OutcomeCompletion
    private var status = 0
    private var headers: [String: String] = [:]
    private var body: [UInt8] = []

    init(completion: OutcomeCompletion) {
        self.completion = completion
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .headers(let frame):
            for (name, value, _) in frame.headers {
                if name == ":status" { status = Int(value) ?? 0 } else { headers[name] = value }
            }
            if frame.endStream { finish(.response(status: status, headers: headers, body: String(decoding: body, as: UTF8.self))) }
        case .data(let frame):
            if case .byteBuffer(let buffer) = frame.data { body += buffer.readableBytesView }
            if frame.endStream { finish(.response(status: status, headers: headers, body: String(decoding: body, as: UTF8.self))) }
        case .rstStream(let code):
            finish(.reset(code))
        default:
            break
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let closed = event as? StreamClosedEvent, let reason = closed.reason {
            finish(.reset(reason))
        }
        context.fireUserInboundEventTriggered(event)
    }

    func channelInactive(context: ChannelHandlerContext) {
        finish(.closed)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        finish(.closed)
        context.close(promise: nil)
    }

    private func finish(_ outcome: H2TestClient.Outcome) {
        completion.complete(.success(outcome))
    }
}

/// Completes a request's promise once, from the response or the timeout; both run on the
/// connection's event loop, hence the unchecked `Sendable`.
final class OutcomeCompletion: @unchecked Sendable {
    private let promise: EventLoopPromise<H2TestClient.Outcome>
    private var done = false

    init(promise: EventLoopPromise<H2TestClient.Outcome>) {
        self.promise = promise
    }

    func complete(_ result: Result<H2TestClient.Outcome, any Error>) {
        promise.futureResult.eventLoop.preconditionInEventLoop()
        guard !done else { return }
        done = true
        promise.completeWith(result)
    }
}
