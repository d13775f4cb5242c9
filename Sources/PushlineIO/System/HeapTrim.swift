#if canImport(Glibc)
import Glibc
#endif

/// Gives the allocator's free pages back to the kernel (glibc's `malloc_trim`).
///
/// A sending run allocates on one thread what another frees (responses, events, result lines,
/// a batch's bytes), and glibc keeps freed memory in the arena it came from. Over millions of
/// requests that free space, not the heap in use, is what grew a run's RSS: heaptrack puts the
/// heap of a two-provider send at 93 MiB for 100,000 customers and 91 MiB for 300,000, while
/// its RSS rose from 131 to 148 MB between 100,000 and 1,000,000. The sink calls this every few
/// seconds, off the transfer threads.
public enum HeapTrim {
    /// Returns whether any memory was given back (false where there is no `malloc_trim`).
    @discardableResult
    public static func releaseFreeMemory() -> Bool {
        (mallocTrim?(0) ?? 0) != 0
    }

    /// Whether this C library has `malloc_trim` (glibc).
    public static var isAvailable: Bool { mallocTrim != nil }

    /// glibc's `malloc_trim`, looked up once (Swift's Glibc module does not export malloc.h);
    /// nil on a C library without it, where this does nothing.
    private static let mallocTrim: (@convention(c) (Int) -> Int32)? = {
        #if canImport(Glibc)
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_trim") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (Int) -> Int32).self)
        #else
        return nil
        #endif
    }()
}
