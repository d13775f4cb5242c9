public import PushlineCore
public import PushlineTemplates

/// The type a templated value must have once rendered: a badge written as
/// `"{{ customer.unread }}"` renders text and is then encoded as an integer.
public enum RenderedType: Sendable, Equatable {
    case string
    case integer(ClosedRange<Int>?)
    case number(ClosedRange<Double>?)
    case boolean
}

/// A value from the pipeline that may be personalized: a constant, or a template compiled once.
public struct TemplatedValue: Sendable {
    public enum Source: Sendable {
        case constant(String)
        case template(any CompiledTemplate)
    }

    public var source: Source
    /// The pipeline path it came from, for reject messages (`notification.ios.badge`).
    public var field: String
    /// Render-cache slot shared by every use of the same template text (nil for constants).
    public var slot: Int?

    public init(_ source: Source, field: String, slot: Int? = nil) {
        self.source = source
        self.field = field
        self.slot = slot
    }

    public var constantText: String? {
        if case .constant(let text) = source { return text }
        return nil
    }

    /// Renders raw text for one recipient into `scratch` (cleared first).
    public func renderRaw(record: JSONValue, into scratch: inout RenderOutput) throws(EncodeFailure) {
        scratch.removeAll()
        switch source {
        case .constant(let text):
            do { try scratch.write(text) } catch { throw EncodeFailure(field: field, TemplateRenderError(error)) }
        case .template(let template):
            do { try template.render(record: record, into: &scratch) } catch { throw EncodeFailure(field: field, error) }
        }
    }
}

/// Why encoding one device failed: becomes a reject with this reason.
public struct EncodeFailure: Error, Sendable {
    public var reason: RejectReason

    public init(_ reason: RejectReason) { self.reason = reason }

    public init(field: String, _ error: TemplateRenderError) {
        reason = .render(field, error.description, code: error.code)
    }

    public init(field: String, invalid message: String) {
        reason = RejectReason("invalid_value", "\(field): \(message)")
    }
}
