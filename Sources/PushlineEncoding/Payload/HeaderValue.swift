import PushlineCore

/// A personalized value sent as an HTTP header (`apns-collapse-id` on APNs directly and inside
/// FCM's `message.apns.headers`, custom payloads' header maps): rendered per recipient, then
/// checked with `WireValue.headerProblem` whichever route carries it. The byte limit comes from
/// the schema property the value was compiled from.
public struct HeaderValue: Sendable {
    public var value: TemplatedValue
    public var maxBytes: Int

    public init(_ value: TemplatedValue, maxBytes: Int) {
        self.value = value
        self.maxBytes = maxBytes
    }

    /// Renders into `context.scratch` and checks it: a reject (`header_too_long`,
    /// `invalid_header_value`) naming the field when the text cannot be a header value.
    func render(context: inout EncodeContext) throws(EncodeFailure) {
        try value.renderRaw(record: context.record, into: &context.scratch)
        let problem = context.scratch.bytes.withUnsafeBytes { WireValue.headerProblem($0, maxBytes: maxBytes) }
        guard let problem else { return }
        if problem.isLength {
            throw EncodeFailure(RejectReason("header_too_long", "\(value.field): rendered \(context.scratch.bytes.count) bytes, at most \(maxBytes) allowed"))
        }
        throw EncodeFailure(RejectReason("invalid_header_value", "\(value.field): rendered text cannot go in a header: \(problem)"))
    }
}
