#if canImport(Glibc)
import Glibc
#endif

/// Nice values of threads (on Linux a thread's own: `setpriority(PRIO_PROCESS, 0, …)` changes
/// the calling thread only).
///
/// A sending run lowers its background threads (the reader, the writer and the encode workers)
/// below its transfer threads: they work ahead through buffers, while an answer that waits for
/// a core delays the next requests of its connection (docs/delivery.md, "Few hand-overs to
/// other threads"). Only ever lowered: an unprivileged process cannot raise a priority again.
public enum ThreadPriority {
    /// How much lower than the process the background threads of a sending run run.
    public static let backgroundOffset: Int32 = 5

    /// The process's nice value (its main thread's), whatever the calling thread's.
    public static func processNice() -> Int32 {
        errno = 0
        let value = getpriority(__priority_which_t(PRIO_PROCESS.rawValue), id_t(getpid()))
        return errno == 0 ? value : 0
    }

    /// The nice value a sending run's background threads get: the process's plus the offset,
    /// at most 19.
    public static func background() -> Int32 {
        min(19, processNice() + backgroundOffset)
    }

    /// Lowers the calling thread to `nice`, unless it already runs at that priority or lower.
    /// Failures change nothing (a priority is a preference, not a requirement).
    public static func lowerCurrentThread(to nice: Int32) {
        errno = 0
        let current = getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0)
        guard errno == 0, current < nice else { return }
        _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, nice)
    }
}
