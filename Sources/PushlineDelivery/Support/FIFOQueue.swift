/// First in, first out, without moving elements on removal: a head index into an array that is
/// compacted once the consumed head outgrows the live part (amortised O(1) at both ends). The
/// transport's admission queue and a lane's main queue.
struct FIFOQueue<Element> {
    private var storage: [Element?] = []
    private var head = 0

    var count: Int { storage.count - head }
    var isEmpty: Bool { head == storage.count }

    mutating func append(_ element: Element) { storage.append(element) }

    mutating func append(contentsOf elements: some Sequence<Element>) {
        for element in elements { storage.append(element) }
    }

    var first: Element? { isEmpty ? nil : storage[head] }

    mutating func popFirst() -> Element? {
        guard head < storage.count else { return nil }
        let element = storage[head]
        storage[head] = nil
        head += 1
        if head == storage.count {
            storage.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= 1024, head * 2 >= storage.count {
            storage.removeFirst(head)
            head = 0
        }
        return element
    }

    mutating func removeAll() -> [Element] {
        let all = storage[head...].compactMap { $0 }
        storage.removeAll()
        head = 0
        return all
    }
}
