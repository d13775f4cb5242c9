import Synchronization

/// Counts the fsyncs in progress on the disk a run's output files share, so that those files
/// write through the page cache meanwhile instead of with O_DIRECT (`OutputFile.Options.flushes`).
///
/// An fsync ends with the disk flushing its write cache. On the VM this was measured on (a
/// virtio disk with a write-back cache, the host's file behind it) that took 0.3 to 0.6 s per
/// checkpoint, and every O_DIRECT write issued meanwhile queued behind it, holding its file's
/// lock: a dry run's writer stopped for the whole flush, and with it every encode worker, at
/// every checkpoint (about a sixth of the run's wall time). A write into the page cache does not
/// wait for the device, so the run goes on; the pages reach the disk with the next checkpoint's
/// fsync.
public final class DeviceFlushes: Sendable {
    private let running = Atomic<Int>(0)

    public init() {}

    /// Marks an fsync (or a group of them) started; pair with `end()`.
    public func begin() {
        running.add(1, ordering: .relaxed)
    }

    public func end() {
        running.subtract(1, ordering: .relaxed)
    }

    /// Whether one is in progress now.
    public var inProgress: Bool { running.load(ordering: .relaxed) > 0 }
}
