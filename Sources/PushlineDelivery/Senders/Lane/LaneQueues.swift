/// Requests waiting for their retry instant: a binary min-heap on (instant, order of arrival),
/// so equal instants leave in the order they came.
struct RetryHeap<Element> {
    private struct Item {
        var due: DeliveryInstant
        var order: UInt64
        var element: Element
    }

    private var items: [Item] = []
    private var nextOrder: UInt64 = 0

    var count: Int { items.count }
    var isEmpty: Bool { items.isEmpty }
    var earliest: DeliveryInstant? { items.first?.due }

    private static func less(_ a: Item, _ b: Item) -> Bool {
        a.due < b.due || (a.due == b.due && a.order < b.order)
    }

    mutating func insert(_ element: Element, due: DeliveryInstant) {
        items.append(Item(due: due, order: nextOrder, element: element))
        nextOrder &+= 1
        var child = items.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard Self.less(items[child], items[parent]) else { break }
            items.swapAt(child, parent)
            child = parent
        }
    }

    /// The earliest element if it is due at `now`.
    mutating func popDue(now: DeliveryInstant) -> Element? {
        guard let first = items.first, first.due <= now else { return nil }
        let last = items.removeLast()
        guard !items.isEmpty else { return first.element }
        items[0] = last
        var parent = 0
        while true {
            let left = parent * 2 + 1
            let right = left + 1
            var smallest = parent
            if left < items.count, Self.less(items[left], items[smallest]) { smallest = left }
            if right < items.count, Self.less(items[right], items[smallest]) { smallest = right }
            if smallest == parent { break }
            items.swapAt(parent, smallest)
            parent = smallest
        }
        return first.element
    }

    mutating func removeAll() -> [Element] {
        defer { items.removeAll() }
        return items.map(\.element)
    }
}
