#if canImport(Glibc)
import Glibc
#endif

/// Priorities of threads. On Linux a thread's nice value and scheduling policy are its own:
/// `setpriority(PRIO_PROCESS, 0, …)` and `sched_setscheduler(0, …)` change the calling thread
/// only.
///
/// A sending run lowers its background threads (the reader, the writer and the encode workers)
/// below its transfer threads: they work ahead through buffers, while an answer that waits for
/// a core delays the next requests of its connection (docs/delivery.md, "Background threads
/// give way"). Only ever lowered: an unprivileged process cannot raise a priority again.
public enum ThreadPriority {
    /// How a sending run's background threads give way to its transfer threads
    /// (`pushline run --background-priority`).
    public enum Background: String, Sendable, CaseIterable {
        /// `SCHED_IDLE`: a background thread runs on a core no other thread of its group wants,
        /// and a waking transfer thread (or another process of the group) takes the core at
        /// once. Under cgroups (a container, a Slurm job) the group is the process's own; on a
        /// shared host whose cores are all busy, the background threads wait for idle cores.
        case idle
        /// The process's nice value plus `backgroundOffset`: a smaller share of a busy core.
        case nice
        /// Left as the process's: background and transfer threads share the cores alike.
        case normal

        /// What the background threads' executors apply to their threads; nil: nothing.
        public var lowering: Lowering? {
            switch self {
            case .idle: .idle
            case .nice: .nice(ThreadPriority.backgroundNice())
            case .normal: nil
            }
        }
    }

    /// A change a thread applies to itself (`lowerCurrentThread()`).
    public enum Lowering: Sendable, Equatable {
        /// The idle scheduling policy; the nice value (`backgroundNice()`) where the kernel refuses it.
        case idle
        /// This nice value, when it is lower than the thread's.
        case nice(Int32)

        /// Applies the change to the calling thread; never raises it.
        public func lowerCurrentThread() {
            switch self {
            case .idle:
                if !ThreadPriority.idleCurrentThread() { ThreadPriority.lowerCurrentThread(to: ThreadPriority.backgroundNice()) }
            case .nice(let nice):
                ThreadPriority.lowerCurrentThread(to: nice)
            }
        }
    }

    /// How much lower than the process the background threads run under `.nice`.
    public static let backgroundOffset: Int32 = 5

    /// The process's nice value (its main thread's), whatever the calling thread's.
    public static func processNice() -> Int32 {
        errno = 0
        let value = getpriority(__priority_which_t(PRIO_PROCESS.rawValue), id_t(getpid()))
        return errno == 0 ? value : 0
    }

    /// The nice value a sending run's background threads get under `.nice`: the process's plus
    /// the offset, at most 19.
    public static func backgroundNice() -> Int32 {
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

    #if os(Linux)
    /// Linux's `SCHED_IDLE` (sched.h; Glibc's module does not export it).
    private static let schedIdle: Int32 = 5
    #endif

    /// Puts the calling thread under the idle scheduling policy; false when the kernel refused
    /// (a seccomp profile, a system without it), and nothing changed.
    public static func idleCurrentThread() -> Bool {
        #if os(Linux)
        if currentThreadIsIdle() { return true }
        var parameters = sched_param()
        parameters.sched_priority = 0
        return sched_setscheduler(0, schedIdle, &parameters) == 0
        #else
        return false
        #endif
    }

    /// Whether the calling thread runs under the idle scheduling policy.
    public static func currentThreadIsIdle() -> Bool {
        #if os(Linux)
        return sched_getscheduler(0) == schedIdle
        #else
        return false
        #endif
    }
}
