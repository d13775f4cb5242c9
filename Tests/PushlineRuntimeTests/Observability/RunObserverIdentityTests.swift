import PushlineCore
@testable import PushlineRuntime
import Testing

/// The metrics writer waits for the run to name itself (its labels and file name need the
/// campaign) on the observer's own signal, not by polling.
@Suite("Run observer: waiting for the run's name")
struct RunObserverIdentityTests {
    @Test func aWaiterGetsTheNameWhenTheRunGivesIt() async {
        let observer = RunObserver(audiencePath: "-", metrics: nil)
        async let first = observer.identityWhenNamed()
        async let second = observer.identityWhenNamed()
        observer.identify(campaign: "winback", shard: nil)
        observer.identify(campaign: "ignored: only the first counts", shard: nil)
        let names = await [first, second].map { $0?.campaign }
        #expect(names == ["winback", "winback"])
        #expect(await observer.identityWhenNamed()?.campaign == "winback", "once named, at once")
    }

    @Test func aCancelledWaiterEndsWithoutAName() async {
        let observer = RunObserver(audiencePath: "-", metrics: nil)
        let waiting = Task { await observer.identityWhenNamed() }
        waiting.cancel()
        #expect(await waiting.value == nil)
        // The cancelled waiter is gone: naming the run afterwards resumes nothing twice.
        observer.identify(campaign: "later", shard: nil)
        #expect(observer.identified?.campaign == "later")
    }
}
