import PushlineCore

// STUB: the Handlebars helper replaces this with the real compiler and renderer.
struct HandlebarsTemplate: CompiledTemplate {
    let literalText: String?
    init(compiling source: String, options: TemplateOptions) throws(TemplateCompileError) {
        literalText = source
    }
    func render(record: JSONValue, into output: inout RenderOutput) throws(TemplateRenderError) {
        do { try output.write(literalText ?? "") } catch { throw TemplateRenderError(error) }
    }
}
