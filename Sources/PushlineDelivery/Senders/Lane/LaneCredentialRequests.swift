import Synchronization

/// What a lane's transfer threads ask of an authenticator that must wait for an answer (OAuth:
/// a token from the token endpoint, a verdict on a token the provider refused), done by
/// `ProviderLane.run()` as child tasks of whoever runs the lane. The threads never wait (they
/// are the network loop): they ask here, and each answer comes back through the thread's inbox
/// with a wake-up.
///
/// Bounds: a thread's machine asks for one token at a time (it waits in `fetching`), and for
/// one verdict per credential it was refused with, which the requests waiting for it bound (at
/// most the machine's capacity). The wake-ups are a stream of one: `run` takes everything asked
/// since its last look.
final class LaneCredentialRequests: Sendable {
    enum Request: Sendable {
        case token(answer: @Sendable (Result<LaneCredential, LaneAuthenticator.Failure>) -> Void)
        case verdict(on: LaneCredential, answer: @Sendable (LaneAuthenticator.RefreshDecision) -> Void)
    }

    private let authenticator: LaneAuthenticator
    private let asked = Mutex<[Request]>([])
    private let wakeups: AsyncStream<Void>
    private let wake: AsyncStream<Void>.Continuation

    init(_ authenticator: LaneAuthenticator) {
        self.authenticator = authenticator
        (wakeups, wake) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
    }

    /// From a transfer thread: `request` is answered by `run`.
    func ask(_ request: Request) {
        asked.withLock { $0.append(request) }
        wake.yield()
    }

    /// Every transfer thread of the lane has ended: `run` returns once what it started is done.
    func end() { wake.finish() }

    /// Answers each request in a child task of its own (a token fetch and a verdict may wait on
    /// each other inside the token provider), until `end()`.
    func run() async {
        let authenticator = self.authenticator
        await withTaskGroup(of: Void.self) { group in
            func startAsked() {
                var taken: [Request] = []
                asked.withLock { swap(&taken, &$0) }
                for request in taken {
                    switch request {
                    case .token(let answer):
                        group.addTask {
                            do throws(LaneAuthenticator.Failure) {
                                answer(.success(try await authenticator.credential()))
                            } catch {
                                answer(.failure(error))
                            }
                        }
                    case .verdict(let credential, let answer):
                        group.addTask { answer(await authenticator.rejected(credential)) }
                    }
                }
            }
            for await _ in wakeups { startAsked() }
            // Every thread has ended: an answer would reach an inbox nobody reads.
            asked.withLock { $0.removeAll() }
        }
    }
}
