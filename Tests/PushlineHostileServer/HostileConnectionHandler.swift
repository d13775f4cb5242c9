import NIOCore
import NIOHPACK
import NIOHTTP2

/// One connection's frames, after NIO's HTTP/2 handler (no stream multiplexer, so every frame
/// and every stream id is seen here): counts each request as its HEADERS arrive, then answers
/// it as the plan says. Confined to the connection's event loop.
final class HostileConnectionHandler: ChannelInboundHandler {
    typealias InboundIn = HTTP2Frame
    typealias OutboundOut = HTTP2Frame

    private struct Stream {
        let path: String
        /// The how-many-th arrival of this path on the server (1-based).
        let arrival: Int
        /// Above a GOAWAY's last-stream-id: never answered.
        var ignored = false
    }

    private let state: HostileServerState
    private let rawWriter: RawFrameWriter
    private let dropper: ConnectionDropper
    private let fault: HostilePlan.ConnectionFault
    private let rules: [HostileRule]
    private let closesOnClientError: Bool
    /// This connection's number (1-based, in the order accepted).
    private let connection: Int
    private var streams: [HTTP2StreamID: Stream] = [:]
    /// Requests complete and waiting for the fault's trigger.
    private var collected: [HTTP2StreamID] = []
    private var triggered = false
    private var goawayLastStreamID: HTTP2StreamID?
    private var requestsOnConnection = 0
    /// Requests still to answer at once before a collecting fault starts collecting.
    private var warmUpLeft: Int
    /// `dropAfterReading` is waiting out its quiet period: nothing more is answered.
    private var dropping = false
    /// A header block HPACK cannot decode went out: the client reads nothing after it. The
    /// `oversizedHeader` fault goes on answering (200s the client never reads); a rule's
    /// `oversizedHeader` leaves the connection silent, so the client's receive buffer is empty
    /// when it closes the connection (a close over unread bytes is a TCP reset, which could
    /// discard requests the client wrote before it and the server had not read yet).
    private var broken: AfterBreak?

    private enum AfterBreak {
        case answer
        case silence
    }
    /// The client's SETTINGS_MAX_HEADER_LIST_SIZE, once its SETTINGS arrived with one.
    private var clientMaxHeaderListSize: Int?

    init(
        state: HostileServerState, rawWriter: RawFrameWriter, dropper: ConnectionDropper, fault: HostilePlan.ConnectionFault,
        warmUp: Int = 0, rules: [HostileRule] = [], closesOnClientError: Bool = true, connection: Int = 1
    ) {
        self.closesOnClientError = closesOnClientError
        self.state = state
        self.rawWriter = rawWriter
        self.dropper = dropper
        self.fault = fault
        self.rules = rules
        self.connection = connection
        warmUpLeft = fault == .none ? 0 : warmUp
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        switch frame.payload {
        case .headers(let headers):
            if streams[frame.streamID] == nil {
                let path = headers.headers.first(name: ":path") ?? ""
                var stream = Stream(path: path, arrival: state.received(path: path))
                if let last = goawayLastStreamID, frame.streamID > last {
                    stream.ignored = true
                    state.refused(path: stream.path, arrival: stream.arrival)
                }
                streams[frame.streamID] = stream
                requestsOnConnection += 1
            }
            if headers.endStream { complete(frame.streamID, context: context) }
        case .data(let data):
            if data.endStream { complete(frame.streamID, context: context) }
        case .goAway(_, let errorCode, _) where errorCode != .noError && closesOnClientError:
            // The client failed the connection (a header block it could not decode): as a
            // real server does, close it (TLS close_notify, then FIN). A client that waited for
            // more bytes from the server to notice its own dead session would otherwise hang.
            context.close(promise: nil)
        case .settings(.settings(let settings)):
            for setting in settings where setting.parameter == .maxHeaderListSize {
                clientMaxHeaderListSize = setting.value
            }
        default:
            break
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    /// The request on `id` is complete (END_STREAM seen).
    private func complete(_ id: HTTP2StreamID, context: ChannelHandlerContext) {
        guard let stream = streams[id], !stream.ignored, !dropping else { return }
        if let outage = state.outageInEffect {
            if let status = outage.status, broken == nil {
                writeStatus(id, status: status, retryAfter: outage.retryAfter, context: context)
                state.record(path: stream.path, arrival: stream.arrival, .status(status))
                context.flush()
            }
            return
        }
        switch fault {
        case .none:
            answer(id, context: context)
        case .refuseEvery(let every):
            if (requestsOnConnection - 1) % max(every, 1) == 0 {
                refuse(id, context: context)
            } else {
                answer(id, context: context)
            }
        case .dropAfter(let count, _), .dropAfterReading(let count, _, _), .goaway(let count, _), .oversizedHeader(let count, _):
            guard !triggered else { return answer(id, context: context) }
            if warmUpLeft > 0 {
                warmUpLeft -= 1
                answer(id, context: context)
                break
            }
            collected.append(id)
            if collected.count >= count {
                triggered = true
                act(context: context)
            }
        }
        context.flush()
    }

    /// The collecting fault's trigger: every awaited request has arrived.
    private func act(context: ChannelHandlerContext) {
        let ordered = collected.sorted()
        collected = []
        switch fault {
        case .dropAfter(_, let answered):
            for id in ordered.prefix(answered) { answer(id, context: context) }
            context.flush()
            dropper.drop()
        case .dropAfterReading(_, let answered, let quiet):
            for id in ordered.prefix(answered) { answer(id, context: context) }
            context.flush()
            dropping = true
            let dropper = NIOLoopBound(dropper, eventLoop: context.eventLoop)
            context.eventLoop.scheduleTask(in: .milliseconds(Int64(quiet))) { dropper.value.drop() }
        case .goaway(_, let answered):
            guard answered > 0 else { return }
            let last = ordered[min(answered, ordered.count) - 1]
            goawayLastStreamID = last
            for id in ordered where id > last {
                guard let stream = streams[id] else { continue }
                streams[id]?.ignored = true
                state.refused(path: stream.path, arrival: stream.arrival)
            }
            rawWriter.write(RawFrames.goaway(lastStreamID: Int32(Int(last))))
            for id in ordered where id <= last { answer(id, context: context) }
        case .oversizedHeader(_, let answered):
            for id in ordered.prefix(answered) { answer(id, context: context) }
            if answered < ordered.count {
                perform(.oversizedHeader(valueBytes: 100_000), on: ordered[answered], context: context)
                broken = .answer
            }
            for id in ordered.dropFirst(answered + 1) { answer(id, context: context) }
        case .none, .refuseEvery:
            break
        }
    }

    /// Answers `id` as the first matching rule, else its path, says.
    private func answer(_ id: HTTP2StreamID, context: ChannelHandlerContext) {
        guard let stream = streams[id] else { return }
        let path = stream.path
        if let broken {
            // The client stopped reading at the block that broke the connection: whatever is
            // sent now, it only knows these requests may have been processed.
            guard broken == .answer else { return }
            writeStatus(id, status: 200, context: context)
            state.record(path: path, arrival: stream.arrival, .afterBrokenConnection(status: 200))
            return
        }
        if let rule = rules.first(where: { $0.matches(path: path, arrival: stream.arrival, connection: connection) }) {
            return perform(rule.action, on: id, context: context)
        }
        if path.hasPrefix("/silent") { return }
        if path.hasPrefix("/refuse/") {
            let times = path.split(separator: "/").dropFirst().first.flatMap { Int($0) } ?? 0
            if stream.arrival <= times { return refuse(id, context: context) }
        }
        writeStatus(id, status: 200, context: context)
        state.record(path: path, arrival: stream.arrival, .status(200))
    }

    private func perform(_ action: HostileRule.Action, on id: HTTP2StreamID, context: ChannelHandlerContext) {
        guard let stream = streams[id] else { return }
        let record = { (answer: HostileAnswer) in self.state.record(path: stream.path, arrival: stream.arrival, answer) }
        switch action {
        case .status(let status, let retryAfter):
            writeStatus(id, status: status, retryAfter: retryAfter, context: context)
            record(.status(status))
        case .oversizedHeader(let valueBytes):
            // Beneath NIO, after what NIO holds: the answers before it stay readable.
            context.flush()
            rawWriter.write(RawFrames.oversizedHeaders(stream: Int32(Int(id)), name: "x-oversized", valueBytes: valueBytes))
            broken = .silence
            record(.unreadable(.oversizedField))
        case .malformedHeader(let byte):
            let value = "bad" + String(UnicodeScalar(byte)) + "value"
            writeStatus(id, status: 200, extra: ("x-malformed", value), context: context)
            record([0x00, 0x0A, 0x0D].contains(byte) ? .unreadable(.malformedValue) : .status(200))
        case .headerListOverClientLimit(let fallbackLimit):
            context.flush()
            rawWriter.write(RawFrames.headerListOver(limit: clientMaxHeaderListSize ?? fallbackLimit, stream: Int32(Int(id))))
            record(clientMaxHeaderListSize == nil ? .status(200) : .unreadable(.overHeaderListSize))
        case .reset(let code):
            if code == 0x7 { return refuse(id, context: context) }
            context.write(wrapOutboundOut(HTTP2Frame(streamID: id, payload: .rstStream(HTTP2ErrorCode(networkCode: Int(code))))), promise: nil)
            record(.reset(errorCode: code))
        case .refuse:
            refuse(id, context: context)
        case .silent:
            break
        }
    }

    /// Writes a well-formed answer: `/empty…` paths get a 200 ending on its HEADERS; other 2xx
    /// get `{}`; any other status an APNs-style reason.
    private func writeStatus(
        _ id: HTTP2StreamID, status: Int, retryAfter: String? = nil, extra: (name: String, value: String)? = nil, context: ChannelHandlerContext
    ) {
        guard let stream = streams[id] else { return }
        var head = HPACKHeaders()
        head.add(name: ":status", value: String(status))
        if let retryAfter { head.add(name: "retry-after", value: retryAfter, indexing: .nonIndexable) }
        if let extra { head.add(name: extra.name, value: extra.value, indexing: .nonIndexable) }
        let success = (200..<300).contains(status)
        if success, stream.path.hasPrefix("/empty") {
            context.write(wrapOutboundOut(HTTP2Frame(streamID: id, payload: .headers(.init(headers: head, endStream: true)))), promise: nil)
            return
        }
        let body = success ? "{}" : #"{"reason":"\#(Self.reason(status))"}"#
        head.add(name: "content-type", value: "application/json")
        head.add(name: "content-length", value: String(body.utf8.count))
        context.write(wrapOutboundOut(HTTP2Frame(streamID: id, payload: .headers(.init(headers: head)))), promise: nil)
        let buffer = context.channel.allocator.buffer(string: body)
        context.write(wrapOutboundOut(HTTP2Frame(streamID: id, payload: .data(.init(data: .byteBuffer(buffer), endStream: true)))), promise: nil)
    }

    private static func reason(_ status: Int) -> String {
        switch status {
        case 400: "BadRequest"
        case 403: "Forbidden"
        case 413: "PayloadTooLarge"
        case 429: "TooManyRequests"
        case 500: "InternalServerError"
        case 503: "ServiceUnavailable"
        default: "Unknown"
        }
    }

    private func refuse(_ id: HTTP2StreamID, context: ChannelHandlerContext) {
        if let stream = streams[id] { state.refused(path: stream.path, arrival: stream.arrival) }
        context.write(wrapOutboundOut(HTTP2Frame(streamID: id, payload: .rstStream(.refusedStream))), promise: nil)
    }
}
