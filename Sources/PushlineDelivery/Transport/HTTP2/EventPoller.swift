internal import CNGHTTP2
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The transfer thread's epoll set and its eventfd, the one wake-up other threads may use.
///
/// The eventfd is shared with resolver threads through `WakeSignal`, which refuses to signal
/// once the poller is closed: a descriptor number is reused by the next `open`, and a late
/// signal must never write into someone else's file.
final class EventPoller {
    /// Tokens identify what became ready; 0 is the wake-up.
    static let wakeToken: UInt64 = 0

    let epoll: Int32
    let signal: WakeSignal
    private var tokens = [UInt64](repeating: 0, count: 64)
    private var events = [UInt32](repeating: 0, count: 64)

    init() throws(TransportError) {
        epoll = cnghttp2_epoll_create()
        guard epoll >= 0 else { throw TransportError.curlSetup("epoll_create1 failed") }
        let eventfd = cnghttp2_eventfd()
        guard eventfd >= 0 else {
            Glibc.close(epoll)
            throw TransportError.curlSetup("eventfd failed")
        }
        signal = WakeSignal(eventfd: eventfd)
        _ = cnghttp2_epoll_add(epoll, eventfd, cnghttp2_epollin, Self.wakeToken)
    }

    func add(_ fd: Int32, token: UInt64, writable: Bool) {
        _ = cnghttp2_epoll_add(epoll, fd, Self.mask(writable: writable), token)
    }

    func modify(_ fd: Int32, token: UInt64, writable: Bool) {
        _ = cnghttp2_epoll_modify(epoll, fd, Self.mask(writable: writable), token)
    }

    func remove(_ fd: Int32) {
        _ = cnghttp2_epoll_remove(epoll, fd)
    }

    private static func mask(writable: Bool) -> UInt32 {
        cnghttp2_epollin | cnghttp2_epollhup | (writable ? cnghttp2_epollout : 0)
    }

    /// Waits up to `timeoutMilliseconds` and calls `ready` per descriptor (the wake-up drained
    /// and not reported).
    func wait(timeoutMilliseconds: Int32, _ ready: (UInt64, _ readable: Bool, _ writable: Bool) -> Void) {
        let count = tokens.withUnsafeMutableBufferPointer { tokens in
            events.withUnsafeMutableBufferPointer { events in
                cnghttp2_epoll_wait(epoll, tokens.baseAddress, events.baseAddress, Int32(tokens.count), timeoutMilliseconds)
            }
        }
        guard count > 0 else { return }
        for index in 0..<Int(count) {
            let token = tokens[index]
            if token == Self.wakeToken {
                signal.drain()
                continue
            }
            let mask = events[index]
            let failed = mask & (cnghttp2_epollerr | cnghttp2_epollhup) != 0
            ready(token, mask & cnghttp2_epollin != 0 || failed, mask & cnghttp2_epollout != 0 || failed)
        }
    }

    func close() {
        signal.close()
        Glibc.close(epoll)
    }
}

/// The eventfd behind a lock that knows whether it is still open.
final class WakeSignal: Sendable {
    private let state: Mutex<Int32>

    init(eventfd: Int32) { state = Mutex(eventfd) }

    /// Wakes the loop; nothing once closed.
    func signal() {
        state.withLock { fd in
            if fd >= 0 { cnghttp2_eventfd_signal(fd) }
        }
    }

    fileprivate func drain() {
        state.withLock { fd in
            if fd >= 0 { cnghttp2_eventfd_drain(fd) }
        }
    }

    fileprivate func close() {
        state.withLock { fd in
            if fd >= 0 { Glibc.close(fd) }
            fd = -1
        }
    }
}
