import AsyncAlgorithms
@testable import PushlineRuntime
import Synchronization
import Testing

@Suite("Stage buffer: room between two stages, nothing lost")
struct StageBufferTests {
    /// With nobody taking from the output, the producer still gets `depth` batches ahead (a bare
    /// channel lets it complete none). It never gets further than the buffer, the one being
    /// handed on and the one the buffer's own task may hold: checked at every take, while a slow
    /// taker gives the producer every chance to run ahead. Memory stays bounded.
    @Test(.timeLimit(.minutes(5)))
    func theProducerGetsAheadByTheDepthAndNoFurther() async throws {
        let input = AsyncChannel<Int>()
        let output = AsyncChannel<Int>()
        let depth = 3
        let count = 100
        let sent = Atomic<Int>(0)
        // The producer reports each completed send; the test waits on that, not on a clock, so
        // a loaded machine (the whole suite on two cores) slows it down without failing it. A
        // buffer that holds fewer than `depth` never lets the count get there: the time limit
        // fails the test.
        let (progress, reporter) = AsyncStream.makeStream(of: Int.self, bufferingPolicy: .bufferingNewest(1))
        let forwarding = Task { await StageBuffer.forward(input, to: output, holding: depth) }
        let producing = Task {
            for value in 0..<count {
                await input.send(value)
                reporter.yield(sent.add(1, ordering: .relaxed).newValue)
            }
            input.finish()
            reporter.finish()
        }
        for await completed in progress where completed >= depth { break }
        #expect(sent.load(ordering: .relaxed) >= depth)

        var received: [Int] = []
        var furthestAhead = 0
        for await value in output {
            // Sends completed beyond what was taken: the buffer, the element in hand-off and
            // the one the buffer's task holds. An unbounded buffer breaks this at the first take.
            let ahead = sent.load(ordering: .relaxed) - received.count
            furthestAhead = max(furthestAhead, ahead)
            #expect(ahead <= depth + 2, "sends completed with \(received.count) taken: \(sent.load(ordering: .relaxed))")
            received.append(value)
            for _ in 0..<20 { await Task.yield() }
        }
        await producing.value
        await forwarding.value
        #expect(received == Array(0..<count))
        #expect(furthestAhead >= depth, "the producer got \(furthestAhead) ahead, less than the buffer's \(depth)")
    }

    /// Several takers (the encode workers) share the output: every element reaches exactly one
    /// of them, and all of them see the end once the input finished and the buffer is empty.
    @Test func everyElementReachesOneTakerAndTheEndReachesAll() async {
        let input = AsyncChannel<Int>()
        let output = AsyncChannel<Int>()
        let count = 5_000
        async let forwarded: Void = StageBuffer.forward(input, to: output, holding: 2)
        async let produced: Void = {
            for value in 0..<count { await input.send(value) }
            input.finish()
        }()
        let taken = await withTaskGroup(of: [Int].self) { group in
            for taker in 0..<3 {
                group.addTask {
                    var mine: [Int] = []
                    for await value in output {
                        mine.append(value)
                        // Takers of different speeds, as workers on batches of different work.
                        if (value + taker) % 97 == 0 { await Task.yield() }
                    }
                    return mine
                }
            }
            var all: [[Int]] = []
            for await mine in group { all.append(mine) }
            return all
        }
        await produced
        await forwarded
        #expect(taken.allSatisfy { $0 == $0.sorted() }, "each taker sees the elements in input order")
        #expect(taken.flatMap { $0 }.sorted() == Array(0..<count), "each element exactly once")
    }

    /// An input that finishes before anyone takes: the elements buffered are still all handed on.
    @Test func aFinishedInputIsDrainedToTheLastElement() async {
        let input = AsyncChannel<Int>()
        let output = AsyncChannel<Int>()
        let forwarding = Task { await StageBuffer.forward(input, to: output, holding: 3) }
        for value in 0..<3 { await input.send(value) }
        input.finish()
        var received: [Int] = []
        for await value in output { received.append(value) }
        await forwarding.value
        #expect(received == [0, 1, 2])
    }
}
