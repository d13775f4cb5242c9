import PushlineCore

/// Size enforcement on the final bytes, with the `truncate` policy's retry loop.
enum PayloadFitting {
    /// Writes a payload with `write`, measures it (`size` maps the written byte count to what the
    /// provider counts), and under `truncate` re-writes it with shorter body, then title, text
    /// until it fits. Returns whether text was shortened; throws a reject when it cannot fit.
    static func write(
        into w: inout JSONWriter, context: inout EncodeContext, limit: Int, policy: OversizePolicy,
        provider: Provider, size: (Int) -> Int,
        _ write: (inout JSONWriter, inout EncodeContext) throws(EncodeFailure) -> Void
    ) throws(EncodeFailure) -> Bool {
        let start = w.count
        context.renderedText = [0, 0, 0]
        try write(&w, &context)
        var measured = size(w.count - start)
        guard measured > limit else { return false }
        guard policy == .truncate else {
            throw EncodeFailure(.payloadTooLarge(provider: provider, size: measured, limit: limit))
        }
        var budget = TruncationBudget(body: context.renderedText[TextRole.body.index], title: context.renderedText[TextRole.title.index])
        // Each round removes at least the excess from the body (then the title): escaped bytes
        // are never fewer than raw ones, so a few rounds settle; the ellipsis costs 3 bytes.
        for _ in 0..<6 {
            let excess = measured - limit + 3
            if let body = budget.body, body > 0 {
                budget.body = max(0, body - excess)
            } else if let title = budget.title, title > 0 {
                budget.title = max(0, title - excess)
            } else {
                break
            }
            w.truncate(to: start, needsComma: false)
            context.truncation = budget
            defer { context.truncation = nil }
            try write(&w, &context)
            measured = size(w.count - start)
            if measured <= limit { return true }
        }
        throw EncodeFailure(.payloadTooLarge(provider: provider, size: measured, limit: limit, what: "payload (even with its text truncated)"))
    }
}
