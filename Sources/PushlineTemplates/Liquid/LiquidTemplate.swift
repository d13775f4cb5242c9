import PushlineCore

/// A Liquid template compiled once per campaign.
///
/// The program is a node tree of literal byte runs and pre-parsed lookups; `render` walks it for
/// one record. A template made only of text and plain `{{ path }}` outputs renders without a
/// single allocation: values go from the record's bytes straight into the output.
/// A class so the `any CompiledTemplate` existential holds one reference: each render through it
/// costs a retain at most, not a copy of every field.
final class LiquidTemplate: CompiledTemplate {
    let literalText: String?
    let nodes: [LiquidNode]
    let snippets: [String: [LiquidNode]]
    let options: TemplateOptions
    /// For templates made of text, outputs of static paths with a few byte filters and `if`
    /// blocks comparing a path with a number: walked without the general renderer.
    let flat: LiquidFlatProgram?
    /// Built once: a renderer per render copied the snippet table and options each time.
    let renderer: LiquidRenderer

    init(compiling source: String, options: TemplateOptions) throws(TemplateCompileError) {
        self.options = options
        let bytes = Array(source.utf8)
        let (nodes, referenced) = try LiquidTemplate.parse(bytes, options: options)
        self.nodes = nodes
        flat = LiquidFlatProgram(nodes, budget: LiquidBudget(options))
        // Text-only templates become constants: their text is what the nodes hold, not the
        // source (comments, `raw` tags and empty outputs parse to text or to nothing).
        var literal: [UInt8] = []
        var onlyText = true
        for node in nodes {
            guard case .text(let run) = node else { onlyText = false; break }
            literal += run
        }
        literalText = onlyText ? String(decoding: literal, as: UTF8.self) : nil

        // Compile every snippet reachable from the template, once, so render never parses.
        var snippets: [String: [LiquidNode]] = [:]
        var pending = referenced
        while let name = pending.popLast() {
            guard snippets[name] == nil, let text = options.snippets[name] else { continue }
            do {
                let (snippetNodes, more) = try LiquidTemplate.parse(Array(text.utf8), options: options)
                snippets[name] = snippetNodes
                pending += more
            } catch {
                throw TemplateCompileError(line: error.line, column: error.column, message: "in snippet '\(name)': \(error.message)")
            }
        }
        self.snippets = snippets
        self.renderer = LiquidRenderer(snippets: snippets, options: options)
    }

    private static func parse(_ bytes: [UInt8], options: TemplateOptions) throws(TemplateCompileError) -> ([LiquidNode], [String]) {
        let tokens = try LiquidLexer(source: bytes).tokenize()
        var parser = LiquidParser(source: bytes, tokens: tokens, options: options)
        let nodes = try parser.parseDocument()
        return (nodes, parser.snippetNames)
    }

    func render(record: JSONValue, into output: inout RenderOutput) throws(TemplateRenderError) {
        if let flat, try flat.render(record: record, into: &output, renderer: renderer) { return }
        try render(root: .json(record), into: &output)
    }

    /// Renders against any root value (the tests' hand-built contexts use this too).
    func render(root: LiquidValue, into output: inout RenderOutput) throws(TemplateRenderError) {
        var state = LiquidRenderState(root: root, budget: renderer.budget)
        _ = try renderer.render(nodes, &state, &output)
    }
}
