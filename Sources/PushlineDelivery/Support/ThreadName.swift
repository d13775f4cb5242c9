#if canImport(Glibc)
import Glibc
#endif

/// Names the calling thread as the kernel shows it (`top -H`, `perf`, /proc), so a per-thread
/// profile tells the stages apart: the transfer threads here, the reader and writer threads in
/// PushlineRuntime (which depends on this module; PushlineCore does no I/O).
///
/// Foundation's `Thread.name` is not used: on Linux its setter renames the OS thread only through
/// the pthread handle its creator stores after the thread has started, so a thread that names
/// itself at once loses that race under load (a CI run saw "oot.default-qos", a dispatch
/// worker's name, on the reader's thread), and before `start()` there is no OS thread at all.
/// Glibc's `pthread_setname_np` sits behind _GNU_SOURCE, out of Swift's reach; the kernel takes
/// the name from the thread itself through /proc/thread-self/comm (Linux 3.17+). Elsewhere this
/// does nothing. Names are cut to the kernel's 15 bytes.
public enum ThreadName {
    public static func setCurrent(_ name: String) {
        #if os(Linux)
        let descriptor = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        defer { close(descriptor) }
        let bytes = Array(name.utf8.prefix(15))
        _ = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        #endif
    }
}
