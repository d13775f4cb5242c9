/// A FIFO of requests waiting for a transfer slot: amortised O(1) at both ends without a
/// dependency (the array is compacted once its consumed head outgrows the live part).
struct RequestRing {
    private var storage: [TransportRequest?] = []
    private var head = 0

    var count: Int { storage.count - head }
    var isEmpty: Bool { head == storage.count }

    mutating func append(_ request: TransportRequest) { storage.append(request) }

    mutating func append(contentsOf requests: ArraySlice<TransportRequest>) {
        for request in requests { storage.append(request) }
    }

    mutating func popFirst() -> TransportRequest? {
        guard head < storage.count else { return nil }
        let request = storage[head]
        storage[head] = nil
        head += 1
        if head == storage.count {
            storage.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= 1024, head * 2 >= storage.count {
            storage.removeFirst(head)
            head = 0
        }
        return request
    }
}
