@testable import PushlineRuntime
import Testing

/// The delivery sink's decisions (`DeliverySinkStateMachine`) against a model of what its
/// actions do to two lanes, in every order of the events that can reach it: the input's end,
/// the last held request handed over, a first and a second stop, results that cannot be
/// written, each feeder's last `send`, each lane's events ending, ticks. Every reachable state
/// is visited once; each path is checked as it goes and where it ends.
@Suite("Delivery sink state machine: every interleaving of a run's end")
struct DeliverySinkStateMachineTests {
    enum Event: Hashable, CustomStringConvertible {
        case endOfInput
        /// The sink's release found nothing held (it then asks the machine, every time after).
        case heldEmptied
        case stop(RunStop.Phase)
        case resultsUnwritable
        case feederSentAll(Int)
        case laneEnded(Int)
        case tick

        var description: String {
            switch self {
            case .endOfInput: "endOfInput"
            case .heldEmptied: "heldEmptied"
            case .stop(let phase): "stop(\(phase))"
            case .resultsUnwritable: "resultsUnwritable"
            case .feederSentAll(let lane): "feederSentAll(\(lane))"
            case .laneEnded(let lane): "laneEnded(\(lane))"
            case .tick: "tick"
            }
        }
    }

    /// What the actions did to the world, per lane, and what the run has seen.
    struct World: Hashable {
        struct Lane: Hashable {
            /// The terminal order on the feeder's stream.
            var ending: LaneFeed.Ending?
            var feederReported = false
            /// `finish()` / `cancel()` called (by the feeder after its report, or by the sink).
            var finished = false
            var cancelled = false
            var ended = false
            /// The lane's events may end on their own, before any order (a broken lane).
            var breaks = false
            var sentAfterClose = false
        }

        var lanes: [Lane]
        var inputEnded = false
        var heldEmpty = false
        var stopPhase = RunStop.Phase.running
        var unwritable = false
        var unwritableBeforeImmediate = false
        var drains = 0
        var logStops = 0
        var settledHeld = false
        var settlementClosed = false
        var finishes = 0
        var earlyEnds: Set<Int> = []
        var ticks = 0

        /// The events that can happen next. A feeder reports once its terminal order is on its
        /// stream; a lane's events end once it was finished or cancelled (or at any time, for
        /// a lane that breaks its contract).
        var possible: [Event] {
            guard finishes == 0 else { return [] }
            var events: [Event] = []
            if !inputEnded { events.append(.endOfInput) }
            if !heldEmpty { events.append(.heldEmptied) }
            if stopPhase == .running { events.append(.stop(.draining)) }
            if stopPhase < .immediate { events.append(.stop(.immediate)) }
            if !unwritable { events.append(.resultsUnwritable) }
            if ticks < 1 { events.append(.tick) }
            for (i, lane) in lanes.enumerated() {
                if lane.ending != nil, !lane.feederReported { events.append(.feederSentAll(i)) }
                if !lane.ended, lane.finished || lane.cancelled || lane.breaks { events.append(.laneEnded(i)) }
            }
            return events
        }
    }

    struct Explorer {
        var visited: Set<Pair> = []
        var paths = 0
        var failures: [String] = []
        /// The kinds of action the exploration met (each must be met: nothing goes untested).
        var actionKinds: Set<String> = []

        struct Pair: Hashable {
            var machine: DeliverySinkStateMachine.State
            var world: World
        }

        mutating func explore(_ machine: DeliverySinkStateMachine, _ world: World, path: [Event]) {
            guard visited.insert(Pair(machine: machine.state, world: world)).inserted else { return }
            let next = world.possible
            if next.isEmpty {
                paths += 1
                checkEnd(machine, world, path: path)
                return
            }
            for event in next {
                var machine = machine
                var world = world
                apply(event, to: &machine, &world, path: path + [event])
                explore(machine, world, path: path + [event])
            }
        }

        /// One event: the world changes as the event says, the machine answers, the answer's
        /// actions change the world as the sink's would.
        mutating func apply(_ event: Event, to machine: inout DeliverySinkStateMachine, _ world: inout World, path: [Event]) {
            var actions: [DeliverySinkStateMachine.Action]
            switch event {
            case .endOfInput:
                world.inputEnded = true
                actions = machine.endOfInput()
            case .heldEmptied:
                world.heldEmpty = true
                actions = []
            case .stop(let phase):
                world.stopPhase = max(world.stopPhase, phase)
                actions = machine.stop(phase)
            case .resultsUnwritable:
                world.unwritable = true
                world.unwritableBeforeImmediate = world.stopPhase < .immediate
                actions = machine.resultsUnwritable()
            case .feederSentAll(let lane):
                world.lanes[lane].feederReported = true
                actions = machine.feederSentAll(lane: lane)
                // The feeder then ends its lane as its order says.
                if world.lanes[lane].ending == .finish { world.lanes[lane].finished = true } else { world.lanes[lane].cancelled = true }
            case .laneEnded(let lane):
                world.lanes[lane].ended = true
                let (early, answer) = machine.laneEnded(lane)
                if early { world.earlyEnds.insert(lane) }
                if early != (world.lanes[lane].ending == nil) {
                    failures.append("lane \(lane) ending early: \(early), though its order was \(String(describing: world.lanes[lane].ending)) after \(path)")
                }
                actions = answer
            case .tick:
                world.ticks += 1
                _ = machine.tick()
                actions = []
            }
            // The sink's release after each event: with nothing held, everything was handed over.
            if world.heldEmpty, event != .tick { actions += machine.everythingHandedOver() }
            perform(actions, on: &machine, &world, path: path)
        }

        mutating func perform(_ actions: [DeliverySinkStateMachine.Action], on machine: inout DeliverySinkStateMachine, _ world: inout World, path: [Event]) {
            func fail(_ message: String) { failures.append("\(message) after \(path)") }
            for action in actions {
                actionKinds.insert(String(String(describing: action).prefix { $0 != "(" }))
                if world.finishes > 0 { fail("\(action) after .finish") }
                switch action {
                case .logStop:
                    world.logStops += 1
                case .logCancel:
                    break
                case .closeSettlement:
                    world.settlementClosed = true
                case .settleHeldUnsent:
                    // Settling what was held empties it; the sink then asks again.
                    world.settledHeld = true
                    world.heldEmpty = true
                    perform(machine.everythingHandedOver(), on: &machine, &world, path: path)
                case .drainLanes:
                    world.drains += 1
                    if world.lanes.contains(where: { $0.cancelled }) { fail("a drain after a cancel") }
                case .finishLane(let lane), .cancelLaneAfterSends(let lane):
                    if world.lanes[lane].ending != nil { fail("a second terminal order for lane \(lane)") }
                    if case .finishLane = action {
                        if !world.inputEnded || !world.heldEmpty { fail("lane \(lane) finished before everything was handed over") }
                        world.lanes[lane].ending = .finish
                    } else {
                        world.lanes[lane].ending = .cancel
                    }
                case .cancelLane(let lane):
                    if !world.lanes[lane].feederReported { fail("lane \(lane) cancelled before its feeder's last send") }
                    if world.lanes[lane].cancelled { fail("lane \(lane) cancelled twice") }
                    world.lanes[lane].cancelled = true
                case .finish:
                    world.finishes += 1
                }
            }
        }

        mutating func checkEnd(_ machine: DeliverySinkStateMachine, _ world: World, path: [Event]) {
            func fail(_ message: String) { failures.append("\(message) at the end of \(path)") }
            if world.finishes != 1 { fail("\(world.finishes) finishes") }
            if machine.state != .finished { fail("not finished: \(machine.state)") }
            if !world.inputEnded || world.lanes.contains(where: { !$0.ended }) { fail("finished before input and lanes ended") }
            let stopped = world.stopPhase > .running || world.unwritable
            if world.drains != (stopped ? 1 : 0) { fail("\(world.drains) drains") }
            if world.logStops > 1 { fail("\(world.logStops) stop lines") }
            // Results that cannot be written close the settlement (the reader stops) unless an
            // immediate stop came first (the reader stops for it).
            if world.settlementClosed != world.unwritableBeforeImmediate { fail("settlement closed: \(world.settlementClosed)") }
            for (i, lane) in world.lanes.enumerated() {
                if lane.ending == nil { fail("lane \(i) never got a terminal order (its feeder would wait forever)") }
                if !lane.breaks, world.earlyEnds.contains(i) { fail("lane \(i) counted as ending early though it was told to end") }
            }
        }
    }

    private func explore(breaking: Set<Int> = []) -> Explorer {
        var world = World(lanes: [World.Lane(), World.Lane()])
        for lane in breaking { world.lanes[lane].breaks = true }
        var explorer = Explorer()
        explorer.explore(DeliverySinkStateMachine(lanes: 2), world, path: [])
        return explorer
    }

    @Test func everyOrderEndsOnceWithEachLaneToldOnceAndNothingCancelledBeforeItsLastSend() {
        let explorer = explore()
        #expect(explorer.failures.isEmpty, "\(explorer.failures.prefix(5))")
        #expect(explorer.visited.count > 400, "explored \(explorer.visited.count) states, \(explorer.paths) end states")
        #expect(explorer.actionKinds == [
            "logStop", "logCancel", "closeSettlement", "settleHeldUnsent", "drainLanes", "finishLane",
            "cancelLaneAfterSends", "cancelLane", "finish",
        ])
    }

    @Test func aLaneThatEndsOnItsOwnIsCountedEarlyAndTheRunStillEnds() {
        let explorer = explore(breaking: [1])
        #expect(explorer.failures.isEmpty, "\(explorer.failures.prefix(5))")
        #expect(explorer.visited.count > 400, "explored \(explorer.visited.count) states")
    }

    // MARK: - Single paths, spelled out

    @Test func aQuietRunFinishesEachLaneOnceTheInputEndedAndAllWasHandedOver() {
        var machine = DeliverySinkStateMachine(lanes: 2)
        #expect(machine.everythingHandedOver().isEmpty, "input still open")
        #expect(machine.endOfInput().isEmpty)
        #expect(machine.everythingHandedOver() == [.finishLane(0), .finishLane(1)])
        #expect(machine.everythingHandedOver().isEmpty, "told once")
        #expect(machine.feederSentAll(lane: 0).isEmpty)
        #expect(machine.laneEnded(0) == (early: false, actions: []))
        #expect(machine.feederSentAll(lane: 1).isEmpty)
        #expect(machine.laneEnded(1) == (early: false, actions: [.finish]))
        #expect(machine.state == .finished)
    }

    @Test func aFirstStopDrainsOnceAndSettlesHeldRequests() {
        var machine = DeliverySinkStateMachine(lanes: 1)
        #expect(machine.sendsToLanes)
        #expect(machine.stop(.draining) == [.logStop(immediate: false), .settleHeldUnsent, .drainLanes])
        #expect(!machine.sendsToLanes)
        #expect(machine.stop(.draining).isEmpty)
    }

    @Test func aSecondStopCancelsAnOpenFeederBehindItsRequestsAndAFinishedOneAfterItsLastSend() {
        // Still open at the second stop: the cancel goes behind the feeder's requests.
        var open = DeliverySinkStateMachine(lanes: 1)
        _ = open.stop(.draining)
        #expect(open.stop(.immediate) == [.logCancel(.immediateStop), .cancelLaneAfterSends(0)])

        // Both told to finish once the drain settled what was held; lane 1 is done sending.
        var machine = DeliverySinkStateMachine(lanes: 2)
        _ = machine.endOfInput()
        _ = machine.stop(.draining)
        #expect(machine.everythingHandedOver() == [.finishLane(0), .finishLane(1)])
        #expect(machine.feederSentAll(lane: 1).isEmpty)
        #expect(machine.stop(.immediate) == [.logCancel(.immediateStop), .cancelLane(1)])
        #expect(machine.feederSentAll(lane: 0) == [.cancelLane(0)])
    }

    @Test func anImmediateStopWithoutADrainDrainsFirst() {
        var machine = DeliverySinkStateMachine(lanes: 1)
        #expect(machine.stop(.immediate) == [
            .logStop(immediate: true), .settleHeldUnsent, .drainLanes, .logCancel(.immediateStop), .cancelLaneAfterSends(0),
        ])
        #expect(machine.stop(.draining).isEmpty, "a late report of the first phase")
    }

    @Test func unwritableResultsCloseTheSettlementAndCancelEveryLane() {
        var machine = DeliverySinkStateMachine(lanes: 2)
        #expect(machine.resultsUnwritable() == [
            .closeSettlement, .logCancel(.resultsUnwritable), .settleHeldUnsent, .drainLanes,
            .cancelLaneAfterSends(0), .cancelLaneAfterSends(1),
        ])
        #expect(machine.resultsUnwritable().isEmpty)
        #expect(machine.stop(.immediate).isEmpty, "already cancelling")
    }

    @Test func aLaneEndingBeforeItsOrderIsEarlyAndItsFeederIsClosedAtTheEnd() {
        var machine = DeliverySinkStateMachine(lanes: 2)
        #expect(machine.laneEnded(1) == (early: true, actions: []))
        _ = machine.endOfInput()
        // Lane 1's feeder is told to finish like the other (its lane is gone; finishing returns).
        #expect(machine.everythingHandedOver() == [.finishLane(0), .finishLane(1)])
        _ = machine.feederSentAll(lane: 0)
        #expect(machine.laneEnded(0) == (early: false, actions: [.finish]))
    }

    @Test func aBrokenLaneWithHeldRequestsStillLetsTheRunEnd() {
        var machine = DeliverySinkStateMachine(lanes: 1)
        _ = machine.endOfInput()
        // Requests still held (never handed over), and the lane's events end on their own.
        #expect(machine.laneEnded(0) == (early: true, actions: [.cancelLaneAfterSends(0), .finish]))
    }

    @Test func everyFourthTickTrimsTheHeap() {
        var machine = DeliverySinkStateMachine(lanes: 1)
        let trims = (1...8).map { _ in machine.tick() }
        #expect(trims == [false, false, false, true, false, false, false, true])
    }
}
