import PushlineCore
import PushlineDelivery

/// Encrypts each Web Push request of a batch for its subscription (RFC 8291), on the encode
/// worker (`DeliverySink.prepare`), so the transfer threads only send bytes. The ciphertext is
/// appended to the batch's arena and the request's body points at it; the plaintext stays in
/// the arena, unreferenced. A subscription whose keys cannot be used (a `p256dh` that is not a
/// point on P-256) gets an empty body and the `unsealed` flag: its lane settles it failed
/// `invalid_subscription_key` without sending it.
struct WebPushSealing: Sendable {
    /// By route index: whether its requests are Web Push.
    private let sealedRoutes: [Bool]

    /// Nil when no route of `routes` goes to Web Push or the run does not send to it.
    init?(routes: RouteTable, sendingTo providers: [Provider]) {
        guard providers.contains(.webpush), routes.reaches(.webpush) else { return nil }
        sealedRoutes = routes.routes.map { $0.provider == .webpush }
    }

    func seal(_ index: inout RequestIndex) {
        var sealed: [UInt8] = []
        for i in 0..<index.count {
            let entry = index[i]
            guard entry.route.index < sealedRoutes.count, sealedRoutes[entry.route.index] else { continue }
            sealed.removeAll(keepingCapacity: true)
            let ok = index.withArena { arena -> Bool in
                guard entry.body.end <= arena.count,
                      let p256dh = RequestHeaderBlock.value(.webPushP256dh, in: arena, block: entry.headers),
                      let auth = RequestHeaderBlock.value(.webPushAuth, in: arena, block: entry.headers)
                else { return false }
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
                index.replaceBody(of: i, with: range)
            } else {
                index.replaceBody(of: i, with: .empty, adding: .unsealed)
            }
        }
    }
}
