import PushlineCore

/// What a render gives, as one comparable string: the output, or the error it throws. The
/// differential tests hold a flat program to the general renderer through it.
func outcome(_ render: (inout RenderOutput) throws -> Void, mode: RenderOutput.Mode = .jsonStringContent, limit: Int = 1 << 20) -> String {
    var output = RenderOutput(mode: mode, limit: limit)
    do {
        try render(&output)
        return "ok: " + String(decoding: output.bytes, as: UTF8.self)
    } catch {
        return "error: \(error)"
    }
}
