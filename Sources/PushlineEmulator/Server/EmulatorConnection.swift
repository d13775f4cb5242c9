import NIOCore
import NIOHTTP2

/// One client connection's HTTP/2 state: its stream limit (1 until a request's credentials are
/// accepted, as APNs does), the GOAWAY-after-N-streams fault, and graceful close.
///
/// Confined to its channel's event loop: every method runs there (stream handlers share the
/// parent's loop), which is what makes the unchecked `Sendable` sound.
final class EmulatorConnection: @unchecked Sendable {
    let channel: any Channel
    let core: EmulatorCore
    private var streamsOpened = 0
    private var openStreams = 0
    private var widened = false
    private var goawayLastStreamID: HTTP2StreamID?
    private var highestStreamID = HTTP2StreamID.rootStream

    init(channel: any Channel, core: EmulatorCore) {
        self.channel = channel
        self.core = core
    }

    /// A client opened stream `id`. False when it is above a GOAWAY's last stream id: such a
    /// stream must be refused unprocessed (a client may safely send it again elsewhere).
    func streamOpened(_ id: HTTP2StreamID) -> Bool {
        channel.eventLoop.preconditionInEventLoop()
        if let last = goawayLastStreamID, id > last { return false }
        streamsOpened += 1
        openStreams += 1
        if id > highestStreamID { highestStreamID = id }
        core.streamOpened()
        if let limit = core.configuration.faults.goawayAfterStreams, streamsOpened >= limit, goawayLastStreamID == nil {
            sendGoaway(lastStreamID: id)
            core.goawaySent()
        }
        return true
    }

    func streamClosed() {
        channel.eventLoop.preconditionInEventLoop()
        openStreams -= 1
        if goawayLastStreamID != nil && openStreams == 0 {
            channel.close(promise: nil)
        }
    }

    /// A request's credentials were accepted: raise SETTINGS_MAX_CONCURRENT_STREAMS to the
    /// configured maximum (once per connection). Sent before that request's answer, so a client
    /// knows the new limit when it reads the answer.
    func credentialsAccepted() {
        channel.eventLoop.preconditionInEventLoop()
        guard !widened else { return }
        widened = true
        let limits = core.configuration.streams
        guard limits.max != limits.beforeAuthentication else { return }
        let settings: HTTP2Settings = [HTTP2Setting(parameter: .maxConcurrentStreams, value: limits.max)]
        channel.writeAndFlush(HTTP2Frame(streamID: .rootStream, payload: .settings(.settings(settings))), promise: nil)
    }

    /// Graceful shutdown: GOAWAY (no new streams), then close once the open streams are answered.
    func quiesce() {
        channel.eventLoop.preconditionInEventLoop()
        if goawayLastStreamID == nil { sendGoaway(lastStreamID: highestStreamID) }
        if openStreams == 0 { channel.close(promise: nil) }
    }

    private func sendGoaway(lastStreamID: HTTP2StreamID) {
        goawayLastStreamID = lastStreamID
        let frame = HTTP2Frame(streamID: .rootStream, payload: .goAway(lastStreamID: lastStreamID, errorCode: .noError, opaqueData: nil))
        channel.writeAndFlush(frame, promise: nil)
    }
}
