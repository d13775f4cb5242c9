import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP2
import NIOPosix
import NIOSSL

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
    private let channel: any Channel

    private init(port: Int, identity: HostileTLSIdentity, state: HostileServerState, group: MultiThreadedEventLoopGroup, channel: any Channel) {
        self.port = port
        self.identity = identity
        self.state = state
        self.group = group
        self.channel = channel
    }

    /// Starts serving `plan` with `identity` (a fresh certificate valid for a day by default).
    public static func start(_ plan: HostilePlan = HostilePlan(), identity: HostileTLSIdentity? = nil) async throws -> HostileHTTP2Server {
        let identity = try identity ?? HostileTLSIdentity.make()
        let certificate = try NIOSSLCertificate(bytes: Array(identity.certificatePEM.utf8), format: .pem)
        let key = try NIOSSLPrivateKey(bytes: Array(identity.privateKeyPEM.utf8), format: .pem)
        var tls = TLSConfiguration.makeServerConfiguration(certificateChain: [.certificate(certificate)], privateKey: .privateKey(key))
        tls.applicationProtocols = ["h2"]
        let sslContext = try NIOSSLContext(configuration: tls)
        let state = HostileServerState()
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let bootstrap = ServerBootstrap(group: group)
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
                    var streams = NIOHTTP2Handler.StreamConfiguration()
                    // libcurl resets every stream whose answer ends on its HEADERS frame: a
                    // normal client here, not a rapid-reset attack.
                    streams.streamResetFrameRateLimit.maximumCount = 1_000_000
                    streams.streamResetFrameRateLimit.windowLength = .seconds(1)
                    try pipeline.addHandler(NIOHTTP2Handler(mode: .server, connectionConfiguration: connection, streamConfiguration: streams))
                    try pipeline.addHandler(HostileConnectionHandler(state: state, rawWriter: raw, dropper: dropper, fault: fault, warmUp: plan.warmUp))
                }
            }
        let channel: any Channel
        do {
            channel = try await bootstrap.bind(host: "127.0.0.1", port: 0).get()
        } catch {
            try? await group.shutdownGracefully()
            identity.remove()
            throw error
        }
        guard let port = channel.localAddress?.port else {
            try? await channel.close()
            try? await group.shutdownGracefully()
            identity.remove()
            throw HostileServerError("the listening socket has no port")
        }
        return HostileHTTP2Server(port: port, identity: identity, state: state, group: group, channel: channel)
    }

    /// What arrived so far.
    public var counts: HostileCounts { state.counts }

    /// Closes everything at once (no graceful GOAWAY) and removes the certificate file.
    public func stop() async {
        try? await channel.close()
        try? await group.shutdownGracefully()
        identity.remove()
    }
}

/// The counts, shared by every connection's handler.
final class HostileServerState: Sendable {
    private let box = NIOLockedValueBox(HostileCounts())

    var counts: HostileCounts { box.withLockedValue { $0 } }

    /// Counts a request; returns how many times its path has arrived, this one included.
    func received(path: String) -> Int {
        box.withLockedValue { counts in
            counts.received += 1
            counts.receivedByPath[path, default: 0] += 1
            counts.arrivalsByPath[path, default: []].append(.pending)
            return counts.arrivalsByPath[path]?.count ?? 0
        }
    }

    func refused(path: String, arrival: Int) {
        box.withLockedValue { counts in
            counts.unprocessed += 1
            counts.arrivalsByPath[path]?[arrival - 1] = .refused
        }
    }

    func answered(path: String, arrival: Int) {
        box.withLockedValue { counts in
            counts.answered += 1
            counts.arrivalsByPath[path]?[arrival - 1] = .answered
        }
    }

    /// Counts a connection; returns its number (1-based).
    func connectionAccepted() -> Int {
        box.withLockedValue { counts in
            counts.connections += 1
            return counts.connections
        }
    }
}

public struct HostileServerError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
