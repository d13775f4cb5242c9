import PushlineDelivery
import Synchronization

/// A clock the test moves: a monotonic instant and a wall-clock time advanced together.
final class TestClock: DeliveryClock {
    private struct Reading { var instant: DeliveryInstant; var unixTime: Int64 }
    private let reading: Mutex<Reading>

    init(unixTime: Int64 = 1_800_000_000, instant: Int64 = 5_000_000_000) {
        reading = Mutex(Reading(instant: DeliveryInstant(nanoseconds: instant), unixTime: unixTime))
    }

    func now() -> DeliveryInstant { reading.withLock { $0.instant } }
    func unixTime() -> Int64 { reading.withLock { $0.unixTime } }

    /// Moves both clocks forward by whole seconds.
    func advance(seconds: Int64) {
        reading.withLock {
            $0.instant = $0.instant.advanced(by: .seconds(seconds))
            $0.unixTime += seconds
        }
    }

    /// Moves the monotonic clock forward by `nanoseconds` (the wall clock by whole seconds only).
    func advance(nanoseconds: Int64) {
        reading.withLock { $0.instant = $0.instant.advanced(by: .nanoseconds(nanoseconds)) }
    }

    /// Steps the wall clock only (an NTP correction): intervals must not change.
    func stepWallClock(by seconds: Int64) {
        reading.withLock { $0.unixTime += seconds }
    }
}

extension DeliveryInstant {
    static func seconds(_ s: Double) -> DeliveryInstant { DeliveryInstant(nanoseconds: Int64((s * 1e9).rounded())) }
}
