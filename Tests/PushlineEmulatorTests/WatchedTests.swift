import PushlineEmulator
import Testing

/// `Watched`: waiters wake on the update that satisfies them, not on a clock.
@Suite("Watched values")
struct WatchedTests {
    @Test func aConditionAlreadyTrueReturnsAtOnce() async {
        let watched = Watched(5)
        #expect(await watched.wait(limit: .seconds(60)) { $0 == 5 })
    }

    @Test func theUpdateThatSatisfiesAWaiterWakesItAndNoEarlierOne() async {
        let watched = Watched(0)
        async let woke = watched.wait(limit: .seconds(60)) { $0 >= 3 }
        // Each update is made whether or not the waiter registered yet: the waiter either sees
        // the value when it registers or is woken by the update that reaches 3.
        for value in 1...3 { watched.update { $0 = value } }
        #expect(await woke)
        #expect(watched.value == 3)
    }

    @Test func manyWaitersEachWakeOnTheirOwnCondition() async {
        let watched = Watched(0)
        await withTaskGroup(of: Bool.self) { group in
            for threshold in 1...20 {
                group.addTask { await watched.wait(limit: .seconds(60)) { $0 >= threshold } }
            }
            group.addTask {
                for value in 1...20 { watched.update { $0 = value } }
                return true
            }
            var woken = 0
            for await result in group where result { woken += 1 }
            #expect(woken == 21)
        }
    }

    @Test func theLimitIsAHangGuardThatSaysFalse() async {
        let watched = Watched(0)
        #expect(await watched.wait(limit: .milliseconds(50)) { $0 == 1 } == false)
        // A later update finds no stale waiter to resume.
        watched.update { $0 = 1 }
        #expect(await watched.wait(limit: .seconds(60)) { $0 == 1 })
    }
}
