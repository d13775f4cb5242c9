import Foundation
import Synchronization
import Testing
@testable import PushlineDelivery

/// How the nghttp2 engine hands a burst of answers to the lane: in turns of about
/// `completionsPerTurn`, so the requests that replace the first answered streams leave while the
/// rest of the burst is still being read (docs/delivery.md, "The HTTP/2 engine").
@Suite(.enabled(if: LocalHTTP2Server.isAvailable, "nghttpd is not installed (Debian nghttp2-server; scripts/system-packages installs it)"), .timeLimit(.minutes(4)))
struct TransferTurnTests {
    /// nghttpd answers a burst of requests with every HEADERS first and every end (an empty DATA
    /// frame with END_STREAM, 9 bytes) last, in one TLS record. Read in large slices, all 100
    /// ends land in one turn and the connection runs in lock-step with its window (100 answers
    /// read, then 100 requests in one write); the engine reads in slices small enough that a
    /// turn ends about `completionsPerTurn` streams.
    @Test func aBurstOfEndsIsHandedOverInTurnsOfAboutCompletionsPerTurn() async throws {
        let server = try await LocalHTTP2Server.start(files: ["empty": []])
        defer { server.stop() }
        let host = RefillingHost(url: server.baseURL + "/empty", window: 100, total: 3_000)
        let transport = try HTTP2Transport(
            TransportConfiguration(connections: 1, streamsPerConnection: 100, caFile: server.certificatePath).on(.nghttp2), host: host)
        await host.ended()
        await transport.shutdown()

        let turns = host.completionsPerTurn.withLock { $0 }
        let answered = host.answered.withLock { $0 }
        #expect(answered == 3_000, "every request answered 200 once")
        #expect(turns.reduce(0, +) == 3_000)
        // Ends of a whole 128-byte slice may join the turn that filled up: at most 15 more.
        let bound = NGHTTP2TransferEngine.completionsPerTurn + 15
        #expect(turns.max() ?? 0 <= bound, "the largest turn ended \(turns.max() ?? 0) streams (bound \(bound)); turns: \(turns.prefix(40))")
        // The window really was full at times: without it the bound above proves nothing.
        #expect(turns.filter { $0 >= NGHTTP2TransferEngine.completionsPerTurn }.count >= 10, "turns: \(turns.prefix(40))")
    }
}

/// A host that keeps `window` requests in flight until `total` were answered, recording how many
/// streams each turn ended.
private final class RefillingHost: TransferLoopHost, @unchecked Sendable {
    let url: String
    let window: Int
    let total: Int
    let completionsPerTurn = Mutex<[Int]>([])
    let answered = Mutex(0)
    private let end = Mutex<(done: Bool, waiter: CheckedContinuation<Void, Never>?)>((false, nil))
    // Confined to the transfer thread.
    private var started = 0
    private var finished = 0

    init(url: String, window: Int, total: Int) {
        self.url = url
        self.window = window
        self.total = total
    }

    func turn(_ completions: [TransportResponse], transportCancelled: Bool) -> TransferLoopTurn {
        var turn = TransferLoopTurn()
        if !completions.isEmpty {
            completionsPerTurn.withLock { $0.append(completions.count) }
            answered.withLock { $0 += completions.filter { $0.status == 200 && $0.end == .answered }.count }
        }
        finished += completions.count
        while started < total, started - finished < window, !transportCancelled {
            turn.start.append(TransportRequest(slot: UInt64(started), method: .get, url: url))
            started += 1
        }
        turn.ended = started == total || transportCancelled
        return turn
    }

    func loopEnded() {
        let waiter = end.withLock { state -> CheckedContinuation<Void, Never>? in
            state.done = true
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
    }

    func ended() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let done = end.withLock { state -> Bool in
                if !state.done { state.waiter = continuation }
                return state.done
            }
            if done { continuation.resume() }
        }
    }
}
