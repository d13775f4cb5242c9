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
        let rendered = context.renderedText
        // Escaping makes written bytes grow unevenly with the text (a quote costs 2, a control
        // character 6), so the budget is found by bisection on the encoded size: the longest
        // body that fits, then, if even an empty body does not, the longest title.
        func encode(_ budget: TruncationBudget, _ w: inout JSONWriter, _ context: inout EncodeContext) throws(EncodeFailure) -> Int {
            w.truncate(to: start, needsComma: false)
            context.truncation = budget
            defer { context.truncation = nil }
            try write(&w, &context)
            return size(w.count - start)
        }
        var budget = TruncationBudget(body: rendered[TextRole.body.index], title: rendered[TextRole.title.index])
        for role in [TextRole.body, .title] {
            let full = role == .body ? budget.body : budget.title
            guard let full, full > 0 else { continue }
            var low = 0, high = full
            while low < high {
                let mid = (low + high + 1) / 2
                if role == .body { budget.body = mid } else { budget.title = mid }
                if try encode(budget, &w, &context) <= limit { low = mid } else { high = mid - 1 }
            }
            if role == .body { budget.body = low } else { budget.title = low }
            measured = try encode(budget, &w, &context)
            if measured <= limit { return true }
        }
        throw EncodeFailure(.payloadTooLarge(provider: provider, size: measured, limit: limit, what: "payload (even with its text truncated)"))
    }
}
