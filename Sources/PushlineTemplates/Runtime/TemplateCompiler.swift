/// Entry point: compiles template text in a dialect.
public enum TemplateCompiler {
    public static func compile(
        _ source: String,
        dialect: TemplateDialect,
        options: TemplateOptions = TemplateOptions()
    ) throws(TemplateCompileError) -> any CompiledTemplate {
        switch dialect {
        case .liquid: try LiquidTemplate(compiling: source, options: options)
        case .handlebars: try HandlebarsTemplate(compiling: source, options: options)
        }
    }
}
