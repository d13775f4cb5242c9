import PushlineCore

/// Size enforcement on the final bytes, with the `truncate` policy's retry loop.
enum PayloadFitting {
    /// Model-guided encodes before the last resort: with the first write, the probe and the last
    /// resort, at most `maxModelAttempts + 3` encodes per payload.
    static let maxModelAttempts = 3

    /// Writes a payload with `write`, measures it (`size` maps the written byte count to what the
    /// provider counts), and under `truncate` re-writes it with shorter body, then title, text
    /// until it fits. Returns whether text was shortened; throws a reject when it cannot fit.
    static func write(
        into w: inout JSONWriter, context: inout EncodeContext, limit: Int, policy: OversizePolicy,
        provider: Provider, size: (Int) -> Int,
        _ write: (inout JSONWriter, inout EncodeContext) throws(EncodeFailure) -> Void
    ) throws(EncodeFailure) -> Bool {
        let start = w.count
        context.payloadEncodes &+= 1
        try write(&w, &context)
        var measured = size(w.count - start)
        guard measured > limit else { return false }
        guard policy == .truncate else {
            throw EncodeFailure(.payloadTooLarge(provider: provider, size: measured, limit: limit))
        }
        // Escaping makes written bytes grow unevenly with the text (a quote costs 2, a control
        // character 6), so the cut is chosen from each text's table of grapheme ends and their
        // escaped sizes: one probe encode renders every body and title once and builds the
        // tables, the model picks the longest body (then title) that removes the excess, and one
        // encode checks it. If the model fell short (a member dropped when empty, a text escaped
        // twice inside a JSON string), the overshoot is added to the excess and it tries again,
        // a bounded number of times. Before, a bisection re-rendered and re-segmented the texts
        // on every one of its ~30 encodes.
        var texts: [TruncatableText] = []
        func encode(body: Int, title: Int, _ w: inout JSONWriter, _ context: inout EncodeContext) throws(EncodeFailure) -> Int {
            w.truncate(to: start, needsComma: false)
            var budget = TruncationBudget(body: body, title: title)
            swap(&budget.texts, &texts)
            context.truncation = budget
            context.payloadEncodes &+= 1
            defer {
                if var used = context.truncation { swap(&used.texts, &texts) }
                context.truncation = nil
            }
            try write(&w, &context)
            return size(w.count - start)
        }
        measured = try encode(body: .max, title: .max, &w, &context)   // the probe: nothing is cut
        if measured <= limit { return false }   // (renders are deterministic: not expected)
        var excess = measured - limit
        for _ in 0..<maxModelAttempts {
            guard excess > 0 else { return true }
            guard let (body, title) = TruncationModel.budgets(texts: texts, excess: excess) else { break }
            measured = try encode(body: body, title: title ?? .max, &w, &context)
            if measured <= limit { return true }
            excess += measured - limit
        }
        // The texts cannot remove enough (or the model kept missing): cut every body and title to
        // nothing, and report that size when it still does not fit.
        measured = try encode(body: 0, title: 0, &w, &context)
        if measured <= limit { return true }
        throw EncodeFailure(.payloadTooLarge(provider: provider, size: measured, limit: limit, what: "payload (even with its text truncated)"))
    }
}
