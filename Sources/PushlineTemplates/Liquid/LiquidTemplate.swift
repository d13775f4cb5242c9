import PushlineCore

/// A Liquid template compiled once per campaign.
///
/// The program is a node tree of literal byte runs and pre-parsed lookups; `render` walks it for
/// one record. A template made only of text and plain `{{ path }}` outputs renders without a
/// single allocation: values go from the record's bytes straight into the output.
struct LiquidTemplate: CompiledTemplate {
    let literalText: String?
    let nodes: [LiquidNode]
    let snippets: [String: [LiquidNode]]
    let options: TemplateOptions

    init(compiling source: String, options: TemplateOptions) throws(TemplateCompileError) {
        self.options = options
        let bytes = Array(source.utf8)
        let (nodes, referenced) = try LiquidTemplate.parse(bytes, options: options)
        self.nodes = nodes
        let hasSyntax = nodes.contains { if case .text = $0 { false } else { true } }
        literalText = hasSyntax ? nil : source

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
    }

    private static func parse(_ bytes: [UInt8], options: TemplateOptions) throws(TemplateCompileError) -> ([LiquidNode], [String]) {
        let tokens = try LiquidLexer(source: bytes).tokenize()
        var parser = LiquidParser(source: bytes, tokens: tokens, options: options)
        let nodes = try parser.parseDocument()
        return (nodes, parser.snippetNames)
    }

    func render(record: JSONValue, into output: inout RenderOutput) throws(TemplateRenderError) {
        try render(root: .json(record), into: &output)
    }

    /// Renders against any root value (the tests' hand-built contexts use this too).
    func render(root: LiquidValue, into output: inout RenderOutput) throws(TemplateRenderError) {
        var state = LiquidRenderState(root: root)
        let renderer = LiquidRenderer(snippets: snippets, options: options)
        _ = try renderer.render(nodes, &state, &output)
    }
}
