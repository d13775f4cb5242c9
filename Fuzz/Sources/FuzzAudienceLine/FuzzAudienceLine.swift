import FuzzSupport
import PushlineEncoding

/// A whole audience line through parsing, routing, templates, payload programs and size checks,
/// in two fixed campaigns (Liquid and Handlebars, compiled once). Everything produced must be
/// strict JSON and the counts must reconcile (see EncodeHarness). Input: one audience line.
private let encoders = [
    ("liquid campaign", EncodeHarness.fixture(Fixtures.liquidPipeline, "liquid")),
    ("handlebars campaign", EncodeHarness.fixture(Fixtures.handlebarsPipeline, "handlebars")),
]
private let otherLine = Array(Fixtures.lines[0].utf8)

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzAudienceLine(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let line = KnownFindings.jsonText(FuzzInput.bytes(data, size))
    for (name, encoder) in encoders {
        let fresh = EncodeHarness.encode(line, with: encoder, what: name)
        // Workers reuse one context for many lines: nothing of one line may leak into the next.
        var context = encoder.makeContext()
        EncodeHarness.encode(otherLine, with: encoder, context: &context, what: name)
        let reused = EncodeHarness.encode(line, with: encoder, context: &context, what: name)
        check(fresh.rejects.bytes == reused.rejects.bytes && zip(fresh.dryRunLines, reused.dryRunLines).allSatisfy { $0.bytes == $1.bytes },
              "\(name): the line encodes differently after another line in the same context")
    }
    return 0
}
