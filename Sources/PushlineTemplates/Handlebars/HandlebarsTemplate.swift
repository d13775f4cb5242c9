import PushlineCore

/// A Handlebars template compiled once per campaign (see `HandlebarsHelpers.swift` for the
/// helpers and `HandlebarsCompiler` for the syntax).
///
/// Rendering reads the recipient's record lazily and writes straight into the `RenderOutput`;
/// text, paths and numbers allocate nothing.
/// A class so the `any CompiledTemplate` existential holds one reference (see `LiquidTemplate`).
final class HandlebarsTemplate: CompiledTemplate {
    let literalText: String?
    let program: HandlebarsProgram
    let partials: [HandlebarsProgram]
    let options: TemplateOptions
    /// Handlebars' `compat` compile option: a name missing from the current context is looked
    /// up in the enclosing ones, as Mustache does. Off for campaigns (Handlebars' default); the
    /// Mustache conformance suite turns it on, as Handlebars' own test suite does.
    let compat: Bool
    /// The common shapes compiled flat (see `HandlebarsFlatProgram`); nil for other templates.
    let flat: HandlebarsFlatProgram?

    convenience init(compiling source: String, options: TemplateOptions) throws(TemplateCompileError) {
        try self.init(compiling: source, options: options, compat: false)
    }

    init(compiling source: String, options: TemplateOptions, compat: Bool) throws(TemplateCompileError) {
        var compiler = HandlebarsCompiler(options: options, compat: compat)
        let program = try compiler.compile(Array(source.utf8))
        self.program = program
        self.partials = compiler.partials
        self.options = options
        self.compat = compat
        var literal: [UInt8] = []
        var onlyText = true
        for node in program {
            guard case .text(let bytes) = node else { onlyText = false; break }
            literal += bytes
        }
        literalText = onlyText ? String(decoding: literal, as: UTF8.self) : nil
        flat = HandlebarsFlatProgram(program, options: options, compat: compat)
    }

    func render(record: JSONValue, into output: inout RenderOutput) throws(TemplateRenderError) {
        if let flat, try flat.render(record: record, into: &output, template: self) { return }
        try render(context: .json(record), into: &output)
    }

    /// The general renderer, whatever the template's shape.
    func render(context: HandlebarsValue, into output: inout RenderOutput) throws(TemplateRenderError) {
        try render(program, context: context, into: &output)
    }

    /// `program` (the template's, or one node of it for the flat program) by the general renderer.
    func render(_ program: HandlebarsProgram, context: HandlebarsValue, into output: inout RenderOutput) throws(TemplateRenderError) {
        var renderer = HandlebarsRenderer(template: self, root: context)
        let frame = HandlebarsFrame(context: context, ownsContext: true)
        try withUnsafePointer(to: frame) { (pointer) throws(TemplateRenderError) in
            try renderer.render(program, pointer, &output)
        }
    }
}
