import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP2
import NIOPosix
import NIOSSL

/// A local APNs / FCM v1 / OAuth / Web Push / ADM / Standard Webhooks server over HTTP/2 and
/// TLS (ALPN h2) with seeded fault injection, for tests and `pushline-emulator`.
///
/// ```swift
/// let credentials = try EmulatorCredentials.generate()
/// var configuration = EmulatorConfiguration(tls: try TLSIdentity.generate())
/// configuration.apns = credentials.apnsAccount
/// configuration.fcm = credentials.fcmAccount
/// let emulator = try await ProviderEmulator.start(configuration)
/// // send to emulator.endpoint, trusting configuration.tls.certificatePEM; read emulator.stats()
/// await emulator.stop()
/// ```
public final class ProviderEmulator: Sendable {
    public let configuration: EmulatorConfiguration
    /// The bound port (the configured one, or the one the system picked for port 0).
    public let port: Int
    private let core: EmulatorCore
    private let group: MultiThreadedEventLoopGroup
    private let serverChannel: any Channel
    private let connections: NIOLockedValueBox<[ObjectIdentifier: EmulatorConnection]>
    private let stopped = NIOLockedValueBox(false)

    /// Client resets tolerated per connection in 30 s: a million streams' worth (see `start`).
    static let maximumResetsPerWindow = 1_000_000

    /// `https://127.0.0.1:<port>`: the `endpoint` a sender's configuration names.
    public var endpoint: String { "https://\(configuration.host):\(port)" }
    /// The OAuth token endpoint (a service account's `token_uri`).
    public var tokenURI: String { endpoint + "/token" }
    /// Amazon's token endpoint for ADM (`providers.adm.token_uri`).
    public var admTokenURI: String { endpoint + ADMTokenEndpoint.path }

    /// The webhook receiver's URL for `channel` (`sms`, `email`, …).
    public func webhookURL(_ channel: String) -> String { endpoint + WebhookEndpoint.pathPrefix + channel }

    private init(configuration: EmulatorConfiguration, port: Int, core: EmulatorCore, group: MultiThreadedEventLoopGroup,
                 serverChannel: any Channel, connections: NIOLockedValueBox<[ObjectIdentifier: EmulatorConnection]>) {
        self.configuration = configuration
        self.port = port
        self.core = core
        self.group = group
        self.serverChannel = serverChannel
        self.connections = connections
    }

    /// Binds and starts serving; returns once the port is bound.
    public static func start(_ configuration: EmulatorConfiguration) async throws(EmulatorError) -> ProviderEmulator {
        try configuration.validate()
        let sslContext: NIOSSLContext
        do {
            let certificate = try NIOSSLCertificate(bytes: Array(configuration.tls.certificatePEM.utf8), format: .pem)
            let key = try NIOSSLPrivateKey(bytes: Array(configuration.tls.privateKeyPEM.utf8), format: .pem)
            var tls = TLSConfiguration.makeServerConfiguration(certificateChain: [.certificate(certificate)], privateKey: .privateKey(key))
            tls.minimumTLSVersion = .tlsv12
            // h2 only: clients that cannot speak HTTP/2 over TLS (or try h2c) are not served.
            tls.applicationProtocols = ["h2"]
            sslContext = try NIOSSLContext(configuration: tls)
        } catch {
            throw .startFailed("the TLS certificate or key cannot be used: \(error)")
        }

        let records = try RecordFiles(configuration)
        let core = EmulatorCore(configuration: configuration, records: records)
        let connections = NIOLockedValueBox<[ObjectIdentifier: EmulatorConnection]>([:])
        let threads = configuration.threads == 0 ? System.coreCount : configuration.threads
        let group = MultiThreadedEventLoopGroup(numberOfThreads: threads)
        let limits = configuration.streams

        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let pipeline = channel.pipeline.syncOperations
                    try pipeline.addHandler(NIOSSLServerHandler(context: sslContext))
                    let connection = EmulatorConnection(channel: channel, core: core)
                    let key = ObjectIdentifier(connection)
                    connections.withLockedValue { $0[key] = connection }
                    core.connectionOpened()
                    channel.closeFuture.whenComplete { _ in
                        core.connectionClosed()
                        connections.withLockedValue { $0[key] = nil }
                    }
                    var connectionConfiguration = NIOHTTP2Handler.ConnectionConfiguration()
                    connectionConfiguration.initialSettings = [
                        HTTP2Setting(parameter: .maxConcurrentStreams, value: limits.beforeAuthentication),
                        HTTP2Setting(parameter: .maxHeaderListSize, value: HPACKDecoderLimits.maxHeaderListSize),
                        HTTP2Setting(parameter: .initialWindowSize, value: 1 << 20),
                    ]
                    var streamConfiguration = NIOHTTP2Handler.StreamConfiguration()
                    // libcurl answers every response that ends on its HEADERS frame (APNs'
                    // empty 200) with RST_STREAM: one reset per stream is a normal client here,
                    // not a rapid-reset attack, so the limit (200 per 30 s by default) is sized
                    // for a sender at full speed: a connection is never closed for it.
                    streamConfiguration.streamResetFrameRateLimit.maximumCount = Self.maximumResetsPerWindow
                    streamConfiguration.streamResetFrameRateLimit.windowLength = .seconds(30)
                    streamConfiguration.targetWindowSize = 1 << 20
                    _ = try pipeline.configureHTTP2Pipeline(
                        mode: .server, connectionConfiguration: connectionConfiguration, streamConfiguration: streamConfiguration
                    ) { stream in
                        stream.eventLoop.makeCompletedFuture {
                            guard let id = try stream.syncOptions?.getOption(HTTP2StreamChannelOptions.streamID),
                                  connection.streamOpened(id)
                            else {
                                // Above a GOAWAY's last stream id: refused, not processed.
                                stream.writeAndFlush(HTTP2Frame.FramePayload.rstStream(.refusedStream), promise: nil)
                                return
                            }
                            stream.closeFuture.whenComplete { _ in connection.streamClosed() }
                            try stream.pipeline.syncOperations.addHandler(EmulatorStreamHandler(connection: connection))
                        }
                    }
                }
            }

        let channel: any Channel
        do {
            channel = try await bootstrap.bind(host: configuration.host, port: configuration.port).get()
        } catch {
            try? await group.shutdownGracefully()
            records.close()
            throw .startFailed("cannot listen on \(configuration.host):\(configuration.port): \(error)")
        }
        guard let port = channel.localAddress?.port else {
            try? await channel.close()
            try? await group.shutdownGracefully()
            records.close()
            throw .startFailed("the listening socket has no port")
        }
        core.boundPort.withLockedValue { $0 = port }
        return ProviderEmulator(configuration: configuration, port: port, core: core, group: group, serverChannel: channel, connections: connections)
    }

    /// What the emulator received and answered so far.
    public func stats() -> EmulatorStats { core.stats() }

    /// Waits until `condition` holds of the stats (it is checked at every request the emulator
    /// counts); false if `limit` passed first, a hang guard.
    public func waitForStats(limit: Duration = .seconds(60), until condition: @escaping @Sendable (EmulatorStats) -> Bool) async -> Bool {
        await core.state.wait(limit: limit) { condition($0.stats) }
    }

    /// Forgets counters and attempt numbers: the fault plan starts over, as after a restart.
    public func resetStats() { core.state.update { $0.reset() } }

    /// Stops accepting connections, sends GOAWAY on each open one, lets open streams finish
    /// for up to `shutdownGraceMilliseconds`, then closes everything. Safe to call twice.
    public func stop() async {
        let first = stopped.withLockedValue { wasStopped in
            defer { wasStopped = true }
            return !wasStopped
        }
        guard first else { return }
        try? await serverChannel.close()
        let open = connections.withLockedValue { Array($0.values) }
        for connection in open {
            connection.channel.eventLoop.execute { connection.quiesce() }
        }
        let deadline = NIODeadline.now() + .milliseconds(Int64(configuration.shutdownGraceMilliseconds))
        for connection in open {
            let closed = connection.channel.closeFuture
            let timeout = connection.channel.eventLoop.scheduleTask(deadline: deadline) {
                connection.channel.close(promise: nil)
            }
            try? await closed.get()
            timeout.cancel()
        }
        try? await group.shutdownGracefully()
        core.records.close()
    }
}

enum HPACKDecoderLimits {
    /// Header lists above this are refused by the HTTP/2 layer (NIO's default is 16 KiB).
    static let maxHeaderListSize = 65_536
}
