import PushlineCore
import PushlineDelivery
import Synchronization

/// Encrypts each Web Push request of a batch for its subscription (RFC 8291), on the encode
/// worker (`DeliverySink.prepare`; `DryRunSink.prepare` with `--dry-run-encrypt`), so the
/// transfer threads only send bytes. The ciphertext is appended to the batch's arena and the
/// request's body points at it; the plaintext stays in the arena, unreferenced. A subscription
/// whose keys cannot be used (a `p256dh` that is not a point on P-256) gets an empty body and
/// the `unsealed` flag: its lane settles it failed `invalid_subscription_key` without sending it.
struct WebPushSealing: Sendable {
    /// By route index: whether its requests are Web Push.
    private let sealedRoutes: [Bool]
    /// Dry run: the `authorization` each push service would get, when a VAPID key is configured.
    private let dryRunAuthorization: DryRunAuthorization?
    private let dryRun: Bool

    /// For a sending run; nil when no route goes to Web Push or the run does not send to it.
    init?(routes: RouteTable, sendingTo providers: [Provider]) {
        guard providers.contains(.webpush), routes.reaches(.webpush) else { return nil }
        sealedRoutes = routes.routes.map { $0.provider == .webpush }
        dryRunAuthorization = nil
        dryRun = false
    }

    /// For a dry run with `--dry-run-encrypt`: bodies are flagged `sealed` (the dry run shows
    /// them in base64url), and with `key` each request's header block gains the VAPID
    /// `authorization` of its push service. Nil when no route goes to Web Push.
    init?(routes: RouteTable, dryRunWith key: VAPIDKey?) {
        guard routes.reaches(.webpush) else { return nil }
        sealedRoutes = routes.routes.map { $0.provider == .webpush }
        dryRunAuthorization = key.map(DryRunAuthorization.init)
        dryRun = true
    }

    func seal(_ index: inout RequestIndex) {
        var sealed: [UInt8] = []
        var block: [UInt8] = []
        for i in 0..<index.count {
            let entry = index[i]
            guard entry.route.index < sealedRoutes.count, sealedRoutes[entry.route.index] else { continue }
            sealed.removeAll(keepingCapacity: true)
            var authorization: String?
            let ok = index.withArena { arena -> Bool in
                guard entry.body.end <= arena.count,
                      let p256dh = RequestHeaderBlock.value(.webPushP256dh, in: arena, block: entry.headers),
                      let auth = RequestHeaderBlock.value(.webPushAuth, in: arena, block: entry.headers)
                else { return false }
                if let dryRunAuthorization, entry.target.end <= arena.count {
                    authorization = dryRunAuthorization.value(endpoint: UnsafeRawBufferPointer(rebasing: arena[entry.target.range]))
                    block = Array(UnsafeRawBufferPointer(rebasing: arena[entry.headers.range]))
                }
                do {
                    try WebPushEncryption.seal(UnsafeRawBufferPointer(rebasing: arena[entry.body.range]), p256dhText: p256dh, authText: auth, into: &sealed)
                    return true
                } catch {
                    return false
                }
            }
            let start = index.arena.count
            if ok, let range = ByteRange(start, start &+ sealed.count) {
                sealed.withUnsafeBytes { index.arena.appendRaw($0) }
                index.replaceBody(of: i, with: range, adding: dryRun ? .sealed : [])
            } else {
                index.replaceBody(of: i, with: .empty, adding: .unsealed)
            }
            if let authorization {
                // The header block, rebuilt at the arena's end with the authorization item.
                let blockStart = index.arena.count
                block.withUnsafeBytes { index.arena.appendRaw($0) }
                _ = Array(authorization.utf8).withUnsafeBytes { RequestHeaderBlock.append(.dryRunAuthorization, value: $0, to: &index.arena) }
                if let range = ByteRange(blockStart, index.arena.count) { index.replaceHeaders(of: i, with: range) }
            }
        }
    }
}

/// The VAPID `authorization` a dry run shows: one token source per push service origin, as a
/// sending run keeps them (bounded: past 256 origins, no more are remembered).
final class DryRunAuthorization: Sendable {
    private let key: VAPIDKey
    private let sources = Mutex<[String: VAPIDTokenSource]>([:])
    private let clock = SystemDeliveryClock()

    init(_ key: VAPIDKey) { self.key = key }

    func value(endpoint: UnsafeRawBufferPointer) -> String? {
        guard case .success(let origin) = WebPushOrigin.parse(endpoint) else { return nil }
        let audience = origin.description
        let source = sources.withLock { sources -> VAPIDTokenSource in
            if let known = sources[audience] { return known }
            let made = VAPIDTokenSource(key: key, audience: audience, clock: clock)
            if sources.count < 256 { sources[audience] = made }
            return made
        }
        return try? source.token().authorizationHeaderValue
    }
}
