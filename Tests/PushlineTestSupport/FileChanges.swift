import CPushlineTestSupport
import Foundation
import Synchronization

/// Another process's writes, as the kernel reports them (inotify): a test waits for what a child
/// writes by being told of each change, instead of looking again every few milliseconds.
///
/// Changes are queued from the moment a path is watched, so a test that watches, then checks
/// its condition, then waits, misses none: a write between the check and the wait ends the
/// wait at once.
public final class FileChanges: Sendable {
    public enum Change: Sendable, Equatable {
        /// Something watched changed: look again.
        case changed
        /// The process waited on ended (its last writes came before).
        case exited
        /// Nothing within the limit.
        case timedOut
    }

    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    private let descriptor: Int32
    /// Paths that did not exist yet: their nearest existing folder is watched meanwhile, and they
    /// are watched as soon as they appear.
    private let missing: Mutex<[String]>

    /// Watches each of `paths` (a file, or a folder and the files directly in it).
    public init(watching paths: [String]) throws {
        descriptor = cpushlinetestsupport_watch_open()
        guard descriptor >= 0 else { throw Failure(description: "inotify_init1: \(String(cString: strerror(errno)))") }
        missing = Mutex([])
        for path in paths where !(try add(path)) {
            // Told when it is created: its nearest folder that exists is watched.
            var folder = (path as NSString).deletingLastPathComponent
            while !folder.isEmpty, folder != "/", !(try add(folder)) { folder = (folder as NSString).deletingLastPathComponent }
            missing.withLock { $0.append(path) }
        }
    }

    deinit { close(descriptor) }

    /// Whether `path` is watched now (false: it does not exist).
    private func add(_ path: String) throws -> Bool {
        if cpushlinetestsupport_watch_add(descriptor, path) >= 0 { return true }
        if errno == ENOENT || errno == ENOTDIR { return false }
        throw Failure(description: "inotify_add_watch \(path): \(String(cString: strerror(errno)))")
    }

    /// Blocks the calling thread until something watched changes, the process `pid` (if
    /// positive) ends, or `limit` passes.
    public func wait(orExitOf pid: Int32 = 0, limit: Duration) -> Change {
        let milliseconds = limit.components.seconds * 1_000 + limit.components.attoseconds / 1_000_000_000_000_000
        let result = cpushlinetestsupport_watch_wait(descriptor, pid, Int32(clamping: max(0, milliseconds)))
        // A path that appeared is watched from now on (the change that made it woke us).
        missing.withLock { paths in paths.removeAll { (try? add($0)) == true } }
        switch result {
        case 2: return .exited
        case 1: return .changed
        case 0: return .timedOut
        // poll failed: the caller looks again, and its own limit still holds.
        default: return .changed
        }
    }

    /// `wait` on a thread of its own, so the waiting task holds no thread of the cooperative pool.
    public func next(orExitOf pid: Int32 = 0, limit: Duration) async -> Change {
        await withCheckedContinuation { (continuation: CheckedContinuation<Change, Never>) in
            Thread { continuation.resume(returning: self.wait(orExitOf: pid, limit: limit)) }.start()
        }
    }
}
