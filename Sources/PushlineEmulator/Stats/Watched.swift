import Synchronization

/// A value behind a lock that tasks can wait on: `update` changes it and resumes every waiter
/// whose condition now holds, so a test waits for what happened (the emulator received 40
/// requests, a lane settled 200) instead of sleeping and looking again. A time limit guards a
/// hang only; it never decides an outcome.
public final class Watched<Value: Sendable>: Sendable {
    private struct Waiter {
        let id: UInt64
        let condition: @Sendable (Value) -> Bool
        let continuation: CheckedContinuation<Bool, Never>
    }

    private struct State {
        var value: Value
        var waiters: [Waiter] = []
        var nextID: UInt64 = 0
        /// Waiters whose time ran out before they registered.
        var expired: Set<UInt64> = []
    }

    private let state: Mutex<State>

    public init(_ value: Value) {
        state = Mutex(State(value: value))
    }

    public var value: Value { state.withLock { $0.value } }

    /// Changes the value and wakes the waiters it satisfies.
    @discardableResult
    public func update<T>(_ change: (inout Value) throws -> T) rethrows -> T {
        let (result, ready): (T, [CheckedContinuation<Bool, Never>]) = try state.withLock { state in
            let result = try change(&state.value)
            guard !state.waiters.isEmpty else { return (result, []) }
            var ready: [CheckedContinuation<Bool, Never>] = []
            let value = state.value
            state.waiters.removeAll { waiter in
                guard waiter.condition(value) else { return false }
                ready.append(waiter.continuation)
                return true
            }
            return (result, ready)
        }
        for continuation in ready { continuation.resume(returning: true) }
        return result
    }

    /// Waits until `condition` holds of the value; false if `limit` passed first (a hang guard).
    public func wait(limit: Duration = .seconds(60), until condition: @escaping @Sendable (Value) -> Bool) async -> Bool {
        let id = state.withLock { state -> UInt64 in
            defer { state.nextID &+= 1 }
            return state.nextID
        }
        return await withTaskGroup(of: Bool?.self) { group in
            group.addTask {
                await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                    let now = self.state.withLock { state -> Bool? in
                        if state.expired.remove(id) != nil { return false }
                        if condition(state.value) { return true }
                        state.waiters.append(Waiter(id: id, condition: condition, continuation: continuation))
                        return nil
                    }
                    if let now { continuation.resume(returning: now) }
                }
            }
            group.addTask {
                // The hang guard: the only clock in a wait.
                try? await Task.sleep(for: limit)
                return nil
            }
            let first = await group.next() ?? nil
            if let first {
                group.cancelAll()
                return first
            }
            // Time ran out: release the waiter (or keep it from registering).
            let waiter = state.withLock { state -> CheckedContinuation<Bool, Never>? in
                if let index = state.waiters.firstIndex(where: { $0.id == id }) {
                    return state.waiters.remove(at: index).continuation
                }
                state.expired.insert(id)
                return nil
            }
            waiter?.resume(returning: false)
            return await group.next().flatMap { $0 } ?? false
        }
    }
}
