import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import NIOSSL

/// A TLS server that does not speak HTTP/2: ALPN selects http/1.1 (or nothing, as a server
/// without ALPN does), and whatever request arrives gets `HTTP/1.1 200 OK` with `{}`. It counts
/// the bytes it received after the handshake, so a test can tell whether a request was written.
public final class HTTP1OnlyServer: Sendable {
    public let port: Int
    public var certificatePath: String { identity.certificatePath }
    public var baseURL: String { "https://127.0.0.1:\(port)" }

    private let identity: HostileTLSIdentity
    private let received: NIOLockedValueBox<Int>
    private let group: MultiThreadedEventLoopGroup
    private let channel: any Channel

    private init(port: Int, identity: HostileTLSIdentity, received: NIOLockedValueBox<Int>, group: MultiThreadedEventLoopGroup, channel: any Channel) {
        self.port = port
        self.identity = identity
        self.received = received
        self.group = group
        self.channel = channel
    }

    /// - Parameter offersALPN: false makes a server that ignores ALPN (no protocol negotiated).
    public static func start(offersALPN: Bool = true) async throws -> HTTP1OnlyServer {
        let identity = try HostileTLSIdentity.make()
        let certificate = try NIOSSLCertificate(bytes: Array(identity.certificatePEM.utf8), format: .pem)
        let key = try NIOSSLPrivateKey(bytes: Array(identity.privateKeyPEM.utf8), format: .pem)
        var tls = TLSConfiguration.makeServerConfiguration(certificateChain: [.certificate(certificate)], privateKey: .privateKey(key))
        tls.applicationProtocols = offersALPN ? ["http/1.1"] : []
        let sslContext = try NIOSSLContext(configuration: tls)
        let received = NIOLockedValueBox(0)
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: sslContext))
                    try channel.pipeline.syncOperations.addHandler(HTTP1Answerer(received: received))
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
        return HTTP1OnlyServer(port: port, identity: identity, received: received, group: group, channel: channel)
    }

    /// Bytes of requests received after TLS handshakes, over every connection.
    public var bytesReceived: Int { received.withLockedValue { $0 } }

    public func stop() async {
        try? await channel.close()
        try? await group.shutdownGracefully()
        identity.remove()
    }
}

/// Answers each request head (up to the blank line) with a fixed 200.
private final class HTTP1Answerer: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let received: NIOLockedValueBox<Int>
    private var pending: [UInt8] = []

    init(received: NIOLockedValueBox<Int>) { self.received = received }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let buffer = unwrapInboundIn(data)
        received.withLockedValue { $0 += buffer.readableBytes }
        pending += buffer.readableBytesView
        let blankLine: [UInt8] = [13, 10, 13, 10]
        while let end = pending.firstRange(of: blankLine) {
            pending.removeSubrange(..<end.upperBound)
            let answer = "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}"
            context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(string: answer)), promise: nil)
        }
        if pending.count > 65_536 { context.close(promise: nil) }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) { context.close(promise: nil) }
}
