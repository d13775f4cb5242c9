public import PushlineCore

extension EncodedBatch {
    /// Takes the requests at `positions` (ascending indices into `index`) out of the batch and
    /// counts each device `skipped` with `reason`: they are neither written nor sent, and the
    /// counts still reconcile (the device stays counted, with its new outcome).
    public mutating func skipRequests(atAscending positions: [Int], reason: SkipReason, routes: RouteTable) {
        guard !positions.isEmpty else { return }
        var base = baseCounts
        for position in positions {
            let entry = index[position]
            let route = routes.route(entry.route)
            let provider = route?.provider
            if let provider { requestTally[provider.ordinal] -= 1 }
            let arm = route?.variant
            if let arm, arm < armRequestTally.count { armRequestTally[arm] -= 1 }
            if entry.isTruncated { base.truncated -= 1 }
            base.countDevice(provider: provider, arm: arm)
            base.record(.skipped(reason), provider: provider, arm: arm)
        }
        baseCounts = base
        index.removeEntries(atAscending: positions)
    }
}
