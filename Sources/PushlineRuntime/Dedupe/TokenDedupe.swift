public import PushlineCore
public import PushlineEncoding
import Synchronization

extension SkipReason {
    /// A device whose token (in its provider; a webhook address in its channel) an earlier line
    /// or device of the audience already has: the first occurrence in input order gets the request.
    public static let duplicateToken = SkipReason("duplicate_token", "the same device token appeared earlier in the audience")
}

/// Dedupe: the same device token twice in an audience gets one request, the first in input order;
/// later ones are skipped (`duplicate_token`), in dry runs and in sending runs alike.
///
/// Where input order is known: batches carry their sequence number, and workers encode them in
/// parallel. Each worker computes its batch's digests in parallel, then waits its batch's turn
/// here (batch `s` is checked only after batch `s - 1`), checks and inserts the digests under one
/// lock, and goes on (rendering, sending) in parallel again. Only the set lookups are serial (a
/// few nanoseconds a device); workers wait only for an earlier batch still being encoded. No
/// deadlock: workers take batches from the reader in sequence order, so every earlier batch is
/// already held by a worker that does not wait on a later one.
public final class TokenDedupe: Sendable {
    private struct State {
        var set: TokenDigestSet
        var nextSequence = 0
        var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
        var skipped = 0
    }

    private let state: Mutex<State>
    private let channels: [UInt64]
    private let routes: RouteTable

    /// `routes`: the campaign's route table. Push routes key by provider (an FCM token is the
    /// same registration whether the record says iOS or Android); webhook routes by route (an
    /// address is a person on one channel: the same phone for SMS and a chat app is two devices).
    public init(routes: RouteTable, set: TokenDigestSet = TokenDigestSet()) {
        state = Mutex(State(set: set))
        self.routes = routes
        channels = routes.routes.map { route in
            route.provider == .webhook ? 0x1_0000 &+ UInt64(route.id.rawValue) : UInt64(route.provider.ordinal)
        }
    }

    /// The digests of the batch's requests, in index order (on the worker, in parallel).
    public func digests(of batch: EncodedBatch, into digests: inout [UInt64]) {
        digests.removeAll(keepingCapacity: true)
        let channels = self.channels
        batch.index.withArena { arena in
            for i in 0..<batch.index.count {
                let entry = batch.index[i]
                let channel = entry.route.index < channels.count ? channels[entry.route.index] : 0xFFFF_FFFF
                let target = entry.target
                if target.end <= arena.count {
                    digests.append(TokenDigest.digest(channel: channel, token: UnsafeRawBufferPointer(rebasing: arena[target.range])))
                } else {
                    digests.append(TokenDigest.digest(channel: channel, token: UnsafeRawBufferPointer(start: nil, count: 0)))
                }
            }
        }
    }

    /// Waits for the batch's turn, then removes its requests whose digest an earlier request had
    /// (counted `skipped: duplicate_token`). `digests`: from `digests(of:into:)` for this batch.
    /// `earlier`: digests of lines of the batch before its requests' lines (a resume's settled
    /// lines), remembered first and never skipped.
    public func check(_ batch: inout EncodedBatch, digests: [UInt64], after earlier: [UInt64] = []) async {
        let sequence = batch.sequence
        await waitForTurn(sequence)
        var duplicates: [Int] = []
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            for digest in earlier { _ = state.set.insert(digest) }
            state.set.insert(batch: digests) { duplicates.append($0) }
            state.skipped += duplicates.count
            state.nextSequence = sequence + 1
            return state.waiters.removeValue(forKey: sequence + 1)
        }
        next?.resume()
        batch.skipRequests(atAscending: duplicates, reason: .duplicateToken, routes: routes)
    }

    private func waitForTurn(_ sequence: Int) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = state.withLock { state -> Bool in
                if state.nextSequence == sequence { return true }
                state.waiters[sequence] = continuation
                return false
            }
            if now { continuation.resume() }
        }
    }

    /// Distinct tokens remembered, duplicates skipped, slots allocated, and whether the set
    /// stopped growing (tokens beyond it were not deduped).
    public var statistics: (tokens: Int, skipped: Int, slots: Int, saturated: Bool) {
        state.withLock { ($0.set.count, $0.skipped, $0.set.capacity, $0.set.isSaturated) }
    }
}
