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
    private var streams: [HTTP2StreamID: Stream] = [:]
    /// Requests complete and waiting for the fault's trigger.
    private var collected: [HTTP2StreamID] = []
    private var triggered = false
    private var goawayLastStreamID: HTTP2StreamID?
    private var requestsOnConnection = 0
    /// Requests still to answer at once before a collecting fault starts collecting.
    private var warmUpLeft: Int

    init(state: HostileServerState, rawWriter: RawFrameWriter, dropper: ConnectionDropper, fault: HostilePlan.ConnectionFault, warmUp: Int = 0) {
        self.state = state
        self.rawWriter = rawWriter
        self.dropper = dropper
        self.fault = fault
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
        default:
            break
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    /// The request on `id` is complete (END_STREAM seen).
    private func complete(_ id: HTTP2StreamID, context: ChannelHandlerContext) {
        guard let stream = streams[id], !stream.ignored else { return }
        switch fault {
        case .none:
            answer(id, context: context)
        case .refuseEvery(let every):
            if (requestsOnConnection - 1) % max(every, 1) == 0 {
                refuse(id, context: context)
            } else {
                answer(id, context: context)
            }
        case .dropAfter(let count, _), .goaway(let count, _), .oversizedHeader(let count, _):
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
            context.flush()
            if answered < ordered.count {
                let big = ordered[answered]
                if let stream = streams[big] { state.answered(path: stream.path, arrival: stream.arrival) }
                rawWriter.write(RawFrames.oversizedHeaders(stream: Int32(Int(big)), name: "x-oversized", valueBytes: 100_000))
            }
            for id in ordered.dropFirst(answered + 1) { answer(id, context: context) }
        case .none, .refuseEvery:
            break
        }
    }

    /// Answers `id` as its path says.
    private func answer(_ id: HTTP2StreamID, context: ChannelHandlerContext) {
        guard let stream = streams[id] else { return }
        let path = stream.path
        if path.hasPrefix("/silent") { return }
        if path.hasPrefix("/refuse/") {
            let times = path.split(separator: "/").dropFirst().first.flatMap { Int($0) } ?? 0
            if stream.arrival <= times { return refuse(id, context: context) }
        }
        state.answered(path: path, arrival: stream.arrival)
        var head = HPACKHeaders()
        head.add(name: ":status", value: "200")
        if path.hasPrefix("/empty") {
            context.write(wrapOutboundOut(HTTP2Frame(streamID: id, payload: .headers(.init(headers: head, endStream: true)))), promise: nil)
        } else {
            head.add(name: "content-type", value: "application/json")
            head.add(name: "content-length", value: "2")
            context.write(wrapOutboundOut(HTTP2Frame(streamID: id, payload: .headers(.init(headers: head)))), promise: nil)
            let body = context.channel.allocator.buffer(string: "{}")
            context.write(wrapOutboundOut(HTTP2Frame(streamID: id, payload: .data(.init(data: .byteBuffer(body), endStream: true)))), promise: nil)
        }
    }

    private func refuse(_ id: HTTP2StreamID, context: ChannelHandlerContext) {
        if let stream = streams[id] { state.refused(path: stream.path, arrival: stream.arrival) }
        context.write(wrapOutboundOut(HTTP2Frame(streamID: id, payload: .rstStream(.refusedStream))), promise: nil)
    }
}
