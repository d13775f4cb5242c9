import Dispatch
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// SIGINT and SIGTERM as an awaitable event, for a serving process that stops gracefully.
public enum TerminationSignals {
    /// Returns the first SIGINT or SIGTERM received after the call. The default actions are
    /// replaced for the life of the process (a second signal is then also just an event).
    public static func next() async -> Int32 {
        let stream = AsyncStream<Int32> { continuation in
            let queue = DispatchQueue(label: "pushline.emulator.signals")
            let sources = SignalSources([SIGINT, SIGTERM].map { number in
                signal(number, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
                source.setEventHandler { continuation.yield(number) }
                source.resume()
                return source
            })
            continuation.onTermination = { _ in
                queue.async { sources.cancel() }
            }
        }
        for await number in stream { return number }
        return SIGTERM
    }
}

/// The dispatch sources, kept alive until the stream ends; only touched on their own queue
/// (creation happens before any handler can run), hence the unchecked `Sendable`.
private final class SignalSources: @unchecked Sendable {
    private let sources: [any DispatchSourceSignal]

    init(_ sources: [any DispatchSourceSignal]) {
        self.sources = sources
    }

    func cancel() {
        sources.forEach { $0.cancel() }
    }
}
