import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP2
import NIOPosix
import NIOSSL
import PushlineEmulator

/// An HTTP/2-over-TLS server on 127.0.0.1 that misbehaves on purpose (`HostilePlan`) and counts
/// every request it receives, so a test can hold a client's own count of what it sent against
/// what arrived.
///
/// Built on SwiftNIO without a stream multiplexer: one handler per connection sees every frame,
/// and what NIO's state machine would forbid a server (a GOAWAY it does not track, a header block
/// beyond any frame) is written as raw bytes beneath it.
public final class HostileHTTP2Server: Sendable {
    public let port: Int
    /// The server certificate's PEM file, for the client's `caFile`.
    public var certificatePath: String { identity.certificatePath }
    public var baseURL: String { "https://127.0.0.1:\(port)" }

    private let identity: HostileTLSIdentity
    private let state: HostileServerState
    private let group: MultiThreadedEventLoopGroup
    private let listener: HostileListener

    private init(port: Int, identity: HostileTLSIdentity, state: HostileServerState, group: MultiThreadedEventLoopGroup, listener: HostileListener) {
        self.port = port
        self.identity = identity
        self.state = state
        self.group = group
        self.listener = listener
    }

    /// Starts serving `plan` with `identity` (a fresh certificate valid for a day by default).
    public static func start(_ plan: HostilePlan = HostilePlan(), identity: HostileTLSIdentity? = nil) async throws -> HostileHTTP2Server {
        let identity = try identity ?? HostileTLSIdentity.make()
        let certificate = try NIOSSLCertificate(bytes: Array(identity.certificatePEM.utf8), format: .pem)
        let key = try NIOSSLPrivateKey(bytes: Array(identity.privateKeyPEM.utf8), format: .pem)
        var tls = TLSConfiguration.makeServerConfiguration(certificateChain: [.certificate(certificate)], privateKey: .privateKey(key))
        tls.applicationProtocols = ["h2"]
        let sslContext = try NIOSSLContext(configuration: tls)
        let state = HostileServerState(outage: plan.outage)
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        // A bootstrap is not Sendable: the listener makes one for each bind.
        let makeBootstrap: @Sendable () -> ServerBootstrap = {
            ServerBootstrap(group: group)
                .serverChannelOption(.backlog, value: 256)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
                .childChannelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        let index = state.connectionAccepted()
                        let fault = index <= plan.hostileConnections ? plan.fault : .none
                        let pipeline = channel.pipeline.syncOperations
                        let dropper = ConnectionDropper()
                        try pipeline.addHandler(dropper)
                        try pipeline.addHandler(NIOSSLServerHandler(context: sslContext))
                        let raw = RawFrameWriter()
                        try pipeline.addHandler(raw)
                        var connection = NIOHTTP2Handler.ConnectionConfiguration()
                        connection.initialSettings = [
                            HTTP2Setting(parameter: .maxConcurrentStreams, value: plan.maxConcurrentStreams),
                            HTTP2Setting(parameter: .initialWindowSize, value: 1 << 20),
                        ]
                        // A hostile server sends what NIO would refuse to (a NUL or a control byte
                        // in a header value); the requests' :path is all it reads.
                        connection.headerBlockValidation = .disabled
                        var streams = NIOHTTP2Handler.StreamConfiguration()
                        // libcurl resets every stream whose answer ends on its HEADERS frame: a
                        // normal client here, not a rapid-reset attack.
                        streams.streamResetFrameRateLimit.maximumCount = 1_000_000
                        streams.streamResetFrameRateLimit.windowLength = .seconds(1)
                        try pipeline.addHandler(NIOHTTP2Handler(mode: .server, connectionConfiguration: connection, streamConfiguration: streams))
                        try pipeline.addHandler(
                            HostileConnectionHandler(
                                state: state, rawWriter: raw, dropper: dropper, fault: fault, warmUp: plan.warmUp, rules: plan.rules,
                                closesOnClientError: plan.closesOnClientError, connection: index
                            )
                        )
                        let bound = NIOLoopBound(dropper, eventLoop: channel.eventLoop)
                        let drop: @Sendable () -> Void = { bound.eventLoop.execute { bound.value.drop() } }
                        if state.registerConnection(index, drop: drop) {
                            channel.closeFuture.whenComplete { _ in state.unregisterConnection(index) }
                        } else {
                            drop()
                        }
                    }
                }
        }
        let listener = HostileListener(makeBootstrap: makeBootstrap)
        let port: Int
        do {
            port = try await listener.bind(port: 0)
        } catch {
            try? await group.shutdownGracefully()
            identity.remove()
            throw error
        }
        if let outage = plan.outage {
            let eventLoop = group.next()
            state.onOutageStart {
                if outage.refusesConnections { listener.close() }
                if outage.status == nil {
                    // Nothing is answered from now on. The requests the client wrote before it
                    // could know arrive and are counted (pending) before the connections go,
                    // so what the client reports sending can be held against what arrived.
                    eventLoop.scheduleTask(in: .seconds(1)) { state.dropAllConnections() }
                }
                eventLoop.scheduleTask(in: TimeAmount(outage.duration)) {
                    if outage.refusesConnections { listener.rebind(port: port, eventLoop: eventLoop) }
                    state.endOutage()
                }
            }
        }
        return HostileHTTP2Server(port: port, identity: identity, state: state, group: group, listener: listener)
    }

    /// What arrived so far.
    public var counts: HostileCounts { state.counts }

    /// Waits until `condition` holds of the counts; false after `limit` (a hang guard only).
    public func waitForCounts(limit: Duration = .seconds(10), until condition: @escaping @Sendable (HostileCounts) -> Bool) async -> Bool {
        await state.waitForCounts(limit: limit, until: condition)
    }

    /// Closes everything at once (no graceful GOAWAY) and removes the certificate file.
    public func stop() async {
        await listener.stop()
        try? await group.shutdownGracefully()
        identity.remove()
    }
}

extension TimeAmount {
    init(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        self = .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }
}

/// The listening socket, which an outage closes and binds again on the same port.
final class HostileListener: Sendable {
    private let makeBootstrap: @Sendable () -> ServerBootstrap
    private let box = NIOLockedValueBox<(channel: (any Channel)?, stopped: Bool)>((nil, false))

    init(makeBootstrap: @escaping @Sendable () -> ServerBootstrap) { self.makeBootstrap = makeBootstrap }

    /// Binds 127.0.0.1:`port` (0: any) and returns the port.
    func bind(port: Int) async throws -> Int {
        let channel = try await makeBootstrap().bind(host: "127.0.0.1", port: port).get()
        guard let bound = channel.localAddress?.port else {
            try? await channel.close()
            throw HostileServerError("the listening socket has no port")
        }
        let stopped = box.withLockedValue { state in
            if !state.stopped { state.channel = channel }
            return state.stopped
        }
        if stopped { try? await channel.close() }
        return bound
    }

    /// Closes the listening socket: connects are refused until `rebind`.
    func close() {
        let channel = box.withLockedValue { state in
            defer { state.channel = nil }
            return state.channel
        }
        channel?.close(promise: nil)
    }

    /// Binds `port` again, retrying every 50 ms for a few seconds (a socket being closed may
    /// still hold it for a moment).
    func rebind(port: Int, eventLoop: any EventLoop, attempt: Int = 0) {
        guard !box.withLockedValue({ $0.stopped }) else { return }
        makeBootstrap().bind(host: "127.0.0.1", port: port).whenComplete { result in
            switch result {
            case .success(let channel):
                let stopped = self.box.withLockedValue { state in
                    if !state.stopped { state.channel = channel }
                    return state.stopped
                }
                if stopped { channel.close(promise: nil) }
            case .failure:
                guard attempt < 100 else { return }
                eventLoop.scheduleTask(in: .milliseconds(50)) { self.rebind(port: port, eventLoop: eventLoop, attempt: attempt + 1) }
            }
        }
    }

    func stop() async {
        let channel = box.withLockedValue { state in
            state.stopped = true
            defer { state.channel = nil }
            return state.channel
        }
        try? await channel?.close()
    }
}

/// The counts, shared by every connection's handler, and the outage's clock.
final class HostileServerState: Sendable {
    private struct Inner {
        var counts = HostileCounts()
        /// 2xx answers so far (the outage's trigger).
        var successes = 0
        var outageActive = false
        /// How to drop each open connection, by its number.
        var connections: [Int: @Sendable () -> Void] = [:]
        var onOutageStart: (@Sendable () -> Void)?
    }

    private let box = Watched(Inner())
    private let outage: HostileOutage?

    init(outage: HostileOutage?) { self.outage = outage }

    var counts: HostileCounts { box.value.counts }

    /// Waits until `condition` holds of the counts (checked at every change); false after
    /// `limit`, a hang guard.
    func waitForCounts(limit: Duration, until condition: @escaping @Sendable (HostileCounts) -> Bool) async -> Bool {
        await box.wait(limit: limit) { condition($0.counts) }
    }

    /// The outage's answer while it lasts: its status (nil: no answer, the connection goes).
    var outageInEffect: (status: Int?, retryAfter: String?)? {
        guard let outage, box.update({ $0.outageActive }) else { return nil }
        return (outage.status, outage.retryAfter)
    }

    /// Counts a request; returns how many times its path has arrived, this one included.
    func received(path: String) -> Int {
        box.update { inner in
            inner.counts.received += 1
            if inner.outageActive { inner.counts.receivedDuringOutage += 1 }
            inner.counts.receivedByPath[path, default: 0] += 1
            inner.counts.arrivalsByPath[path, default: []].append(.pending)
            inner.counts.answersByPath[path, default: []].append(.none)
            return inner.counts.arrivalsByPath[path]?.count ?? 0
        }
    }

    func refused(path: String, arrival: Int) {
        record(path: path, arrival: arrival, .refused)
    }

    func answered(path: String, arrival: Int) {
        record(path: path, arrival: arrival, .status(200))
    }

    /// What the server sent for the `arrival`-th copy of `path`. The outage starts after the
    /// answer that makes its count.
    func record(path: String, arrival: Int, _ answer: HostileAnswer) {
        let start = box.update { inner -> (@Sendable () -> Void)? in
            inner.counts.answersByPath[path]?[arrival - 1] = answer
            inner.counts.arrivalsByPath[path]?[arrival - 1] = answer.arrival
            switch answer.arrival {
            case .answered: inner.counts.answered += 1
            case .refused: inner.counts.unprocessed += 1
            case .pending: break
            }
            guard let outage, case .status(let status) = answer, (200..<300).contains(status) else { return nil }
            inner.successes += 1
            guard !inner.counts.outageStarted, inner.successes >= outage.afterAnswers else { return nil }
            inner.counts.outageStarted = true
            inner.outageActive = true
            return inner.onOutageStart
        }
        start?()
    }

    /// Drops every open connection (counted as the outage's).
    func dropAllConnections() {
        let drops = box.update { inner in
            inner.counts.connectionsDroppedByOutage += inner.connections.count
            return Array(inner.connections.values)
        }
        for drop in drops { drop() }
    }

    func onOutageStart(_ start: @escaping @Sendable () -> Void) {
        box.update { $0.onOutageStart = start }
    }

    func endOutage() {
        box.update { inner in
            inner.outageActive = false
            inner.counts.outageEnded = true
        }
    }

    /// Counts a connection; returns its number (1-based).
    func connectionAccepted() -> Int {
        box.update { inner in
            inner.counts.connections += 1
            return inner.counts.connections
        }
    }

    /// Keeps how to drop connection `index`; false when an outage that drops connections is on
    /// (the caller drops it at once).
    func registerConnection(_ index: Int, drop: @escaping @Sendable () -> Void) -> Bool {
        box.update { inner in
            if inner.outageActive, outage?.status == nil {
                inner.counts.connectionsDroppedByOutage += 1
                return false
            }
            inner.connections[index] = drop
            return true
        }
    }

    func unregisterConnection(_ index: Int) {
        _ = box.update { $0.connections.removeValue(forKey: index) }
    }
}

public struct HostileServerError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
