public import PushlineCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The template languages a campaign can choose with `personalization:` in its pipeline file.
public enum TemplateDialect: String, Sendable, CaseIterable {
    case liquid
    case handlebars
}

/// Per-campaign template settings, fixed at compile time.
public struct TemplateOptions: Sendable {
    /// A missing variable or a failing filter is an error (the recipient becomes a reject)
    /// instead of rendering as empty text.
    public var strict: Bool
    /// Most bytes one rendered field may produce.
    public var maxOutputBytes: Int
    /// Most iterations one render may run, over all loops together.
    public var maxLoopIterations: Int
    /// Deepest nesting of blocks a template may have (deeper is a compile error); also bounds
    /// expressions (parentheses, brackets, subexpressions) and snippet/partial recursion.
    public var maxNestingDepth: Int
    /// Most work one render may do: loop iterations, filter/helper calls, snippet and partial
    /// expansions, and every byte or element a filter or helper reads or builds.
    public var maxRenderSteps: Int
    /// Handlebars `{{ }}` HTML-escapes when true (spec conformance); push text is not HTML, so off by default.
    public var htmlEscape: Bool
    /// Named snippets that `include`/`render` (Liquid) and partials (Handlebars) may use;
    /// templates never read the filesystem.
    public var snippets: [String: String]
    /// The instant Liquid's `date` reads for `"now"` and `"today"` (UNIX seconds): fixed once
    /// per campaign (the run's start), so every recipient of a run reads the same date and two
    /// renders of one record are the same bytes.
    public var now: Int

    /// `now` nil: the moment these options are made.
    public init(
        strict: Bool = false,
        maxOutputBytes: Int = 8192,
        maxLoopIterations: Int = 10_000,
        maxNestingDepth: Int = 64,
        maxRenderSteps: Int = 10_000_000,
        htmlEscape: Bool = false,
        snippets: [String: String] = [:],
        now: Int? = nil
    ) {
        self.strict = strict
        self.maxOutputBytes = maxOutputBytes
        self.maxLoopIterations = maxLoopIterations
        self.maxNestingDepth = maxNestingDepth
        self.maxRenderSteps = maxRenderSteps
        self.htmlEscape = htmlEscape
        self.snippets = snippets
        self.now = now ?? TemplateClock.currentSeconds()
    }
}

/// A template compiled once per campaign into a program of literal byte runs and lookups.
///
/// `render` reads values straight from the recipient's record (`JSONValue`, lazily indexed bytes)
/// and writes into `output`; on the common path it builds no Swift `String`.
///
/// Class-bound: every payload text holds one, and an `any CompiledTemplate` of a class is one
/// reference (a copy is a retain) rather than an opaque box copied through value witnesses.
public protocol CompiledTemplate: AnyObject, Sendable {
    /// The template's text when it holds no template syntax at all (the encoder then writes it
    /// as a constant and never calls `render`).
    var literalText: String? { get }

    /// Renders for one recipient. `record` is the audience line's root object.
    func render(record: JSONValue, into output: inout RenderOutput) throws(TemplateRenderError)
}

/// A template that does not compile: `line` and `column` are 1-based, within the template text.
public struct TemplateCompileError: Error, Sendable, Equatable, CustomStringConvertible {
    public var line: Int
    public var column: Int
    public var message: String

    public init(line: Int, column: Int, message: String) {
        self.line = line
        self.column = column
        self.message = message
    }

    public var description: String { "line \(line), column \(column): \(message)" }
}

/// A render that failed for one recipient; the recipient becomes a reject with this reason.
public struct TemplateRenderError: Error, Sendable, Equatable, CustomStringConvertible {
    private enum Kind: Sendable, Equatable {
        case missingVariable(String)
        case filter(name: String, message: String)
        case outputLimit(Int)
        case loopLimit(Int)
        case stepLimit(Int)
        case invalidValue(String)
        case other(String)
    }

    private let kind: Kind

    public static func missingVariable(_ path: String) -> Self { .init(kind: .missingVariable(path)) }
    public static func filter(_ name: String, _ message: String) -> Self { .init(kind: .filter(name: name, message: message)) }
    public static func outputLimit(_ bytes: Int) -> Self { .init(kind: .outputLimit(bytes)) }
    public static func loopLimit(_ iterations: Int) -> Self { .init(kind: .loopLimit(iterations)) }
    public static func stepLimit(_ steps: Int) -> Self { .init(kind: .stepLimit(steps)) }
    /// A number out of range or an arithmetic overflow (from the record or the template).
    public static func invalidValue(_ message: String) -> Self { .init(kind: .invalidValue(message)) }
    public static func other(_ message: String) -> Self { .init(kind: .other(message)) }

    /// A stable, machine-readable code for results files.
    public var code: String {
        switch kind {
        case .missingVariable: "missing_variable"
        case .filter: "filter_error"
        case .outputLimit: "rendered_field_too_large"
        case .loopLimit: "loop_limit"
        case .stepLimit: "render_step_limit"
        case .invalidValue: "invalid_value"
        case .other: "render_error"
        }
    }

    public var description: String {
        switch kind {
        case .missingVariable(let path): "missing variable '\(path)'"
        case .filter(let name, let message): "filter '\(name)': \(message)"
        case .outputLimit(let bytes): "rendered text exceeds \(bytes) bytes"
        case .loopLimit(let n): "loops ran more than \(n) iterations"
        case .stepLimit(let n): "rendering took more than \(n) steps"
        case .invalidValue(let message): message
        case .other(let message): message
        }
    }
}

extension TemplateRenderError {
    public init(_ overflow: RenderOutput.LimitExceeded) { self = .outputLimit(overflow.limit) }
}

/// The wall clock, read only where no campaign fixed `now`.
enum TemplateClock {
    static func currentSeconds() -> Int {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Int(ts.tv_sec)
    }
}
