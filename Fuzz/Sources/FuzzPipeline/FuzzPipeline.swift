import FuzzSupport
import PushlineCore
import PushlineEncoding

/// The pipeline loader: YAML text → configuration tree → validated, compiled campaign. Invalid
/// pipelines must be diagnostics (each with a message); a valid one must encode the fixture
/// audience lines into strict JSON that reconciles. Input: a pipeline file.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzPipeline(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = FuzzInput.bytes(data, size)
    switch EncodeHarness.compile(String(decoding: bytes, as: UTF8.self)) {
    case .failure(let error):
        check(!error.list.isEmpty, "a refused pipeline without a diagnostic")
        for diagnostic in error.list {
            check(!diagnostic.message.isEmpty, "a diagnostic without a message")
            check(diagnostic.line >= 0 && diagnostic.column >= 0, "a diagnostic at \(diagnostic.line):\(diagnostic.column)")
        }
        _ = error.description
    case .success(let campaign):
        // The name is the default output folder's last segment (out/<name>): one segment only.
        check(!campaign.name.isEmpty && !campaign.name.contains("/") && campaign.name != "." && campaign.name != ".." && !campaign.name.contains("\0"),
              "campaign name \(escaped(Array(campaign.name.utf8))) is not a single path segment (out/<name> escapes out/)")
        let encoder = CampaignEncoder(campaign: campaign)
        for line in lines { EncodeHarness.encode(line, with: encoder, what: "fuzzed campaign") }
    }
    return 0
}

/// Ordinary lines (one per channel): hostile records are the audience-line target's work.
private let lines = Fixtures.lines.prefix(3).map { Array($0.utf8) }
