import NIOCore
import NIOHPACK
import NIOHTTP2

/// One HTTP/2 stream: buffers the request (headers, then body up to the configured bound, a
/// larger one for webhooks), asks the core for the answer, and writes it, after the configured
/// latency (scheduled on the event loop, never blocking it), as a response, RST_STREAM
/// REFUSED_STREAM or a dropped connection.
final class EmulatorStreamHandler: ChannelInboundHandler {
    typealias InboundIn = HTTP2Frame.FramePayload
    typealias OutboundOut = HTTP2Frame.FramePayload

    private let connection: EmulatorConnection
    private var method = ""
    private var path = ""
    private var headers: [(name: String, value: String)] = []
    private var sawHeaders = false
    private var body: [UInt8] = []
    private var bodyLimit = 0
    private var bodyTruncated = false
    private var answered = false

    init(connection: EmulatorConnection) {
        self.connection = connection
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .headers(let frame):
            if !sawHeaders {
                sawHeaders = true
                for (name, value, _) in frame.headers {
                    switch name {
                    case ":method": method = value
                    case ":path": path = value
                    case _ where name.hasPrefix(":"): break
                    default: headers.append((name, value))
                    }
                }
                let configuration = connection.core.configuration
                bodyLimit = path.hasPrefix(WebhookEndpoint.pathPrefix) ? configuration.maxWebhookBodyBytes : configuration.maxRequestBodyBytes
            }
            if frame.endStream { respond(context: context) }
        case .data(let frame):
            if case .byteBuffer(let buffer) = frame.data {
                let room = bodyLimit - body.count
                if buffer.readableBytes > room {
                    bodyTruncated = true
                    body.append(contentsOf: buffer.readableBytesView.prefix(max(0, room)))
                } else {
                    body.append(contentsOf: buffer.readableBytesView)
                }
            }
            if frame.endStream { respond(context: context) }
        default:
            break
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    private func respond(context: ChannelHandlerContext) {
        guard !answered else { return }
        answered = true
        let request = EmulatorRequest(method: method, path: path, headers: headers, body: body, bodyTruncated: bodyTruncated)
        body = []
        let answer = connection.core.answer(request)
        if answer.authenticated { connection.credentialsAccepted() }
        if answer.latencyMilliseconds > 0 {
            context.eventLoop.assumeIsolated().scheduleTask(in: .milliseconds(Int64(answer.latencyMilliseconds))) {
                self.deliver(answer, context: context)
            }
        } else {
            deliver(answer, context: context)
        }
    }

    private func deliver(_ answer: EmulatorAnswer, context: ChannelHandlerContext) {
        // The client may have reset the stream while the answer waited.
        guard context.channel.isActive else { return }
        switch answer.action {
        case .respond(let status, let extra, let bytes):
            var head = HPACKHeaders()
            head.reserveCapacity(extra.count + 2)
            head.add(name: ":status", value: String(status))
            for (name, value) in extra { head.add(name: name, value: value) }
            head.add(name: "content-length", value: String(bytes.count))
            if bytes.isEmpty {
                context.writeAndFlush(wrapOutboundOut(.headers(.init(headers: head, endStream: true))), promise: nil)
            } else {
                context.write(wrapOutboundOut(.headers(.init(headers: head))), promise: nil)
                let buffer = context.channel.allocator.buffer(bytes: bytes)
                context.writeAndFlush(wrapOutboundOut(.data(.init(data: .byteBuffer(buffer), endStream: true))), promise: nil)
            }
        case .refuseStream:
            context.writeAndFlush(wrapOutboundOut(.rstStream(.refusedStream)), promise: nil)
        case .dropConnection:
            context.channel.parent?.close(promise: nil)
        }
    }
}
