import PushlineCore

/// The shape of most push titles, `Hi {{ customer.first_name }}, your {{ event.event_title }}`,
/// compiled flat: all literal text in one buffer, and per output the text run before it and its
/// path. Rendering is a loop of `write(slice)` and `value(at:)` with nothing to retain per node.
struct LiquidFlatProgram: Sendable {
    struct Segment: Sendable {
        /// Literal bytes (in `text`) written before the lookup.
        var literal: Range<Int>
        var path: JSONPath
        var variable: LiquidVariable
    }

    let text: [UInt8]
    let segments: [Segment]
    /// Literal bytes after the last lookup.
    let tail: Range<Int>

    /// Nil unless every node is text or an unfiltered output of a static path.
    init?(_ nodes: [LiquidNode]) {
        var text: [UInt8] = []
        var segments: [Segment] = []
        var runStart = 0
        for node in nodes {
            switch node {
            case .text(let bytes):
                text += bytes
            case .output(let expression):
                guard expression.filters.isEmpty, case .variable(let variable) = expression.base,
                      let path = variable.jsonPath else { return nil }
                segments.append(Segment(literal: runStart..<text.count, path: path, variable: variable))
                runStart = text.count
            default:
                return nil
            }
        }
        self.text = text
        self.segments = segments
        self.tail = runStart..<text.count
    }

    func render(
        record: JSONValue, into output: inout RenderOutput,
        slowLookup: (LiquidVariable, inout RenderOutput) throws(TemplateRenderError) -> Void
    ) throws(TemplateRenderError) {
        for segment in segments {
            if !segment.literal.isEmpty {
                do { try output.write(text[segment.literal]) } catch { throw TemplateRenderError(error) }
            }
            if let value = record.value(at: segment.path) {
                do { try LiquidValue.json(value).write(to: &output) } catch { throw TemplateRenderError(error) }
            } else {
                try slowLookup(segment.variable, &output)
            }
        }
        if !tail.isEmpty {
            do { try output.write(text[tail]) } catch { throw TemplateRenderError(error) }
        }
    }
}
