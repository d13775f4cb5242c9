import PushlineCore

/// A compiled Liquid template: a tree of nodes whose literal text is ready-to-write bytes and whose
/// lookups are pre-parsed paths.
indirect enum LiquidNode: Sendable {
    case text([UInt8])
    case output(LiquidFilteredExpression)
    case conditional(branches: [LiquidBranch], otherwise: [LiquidNode]?)
    /// `when` and `else` blocks in source order: Shopify renders every matching `when`, and an
    /// `else` when no `when` before it matched.
    case caseWhen(subject: LiquidExpression, blocks: [LiquidCaseBlock])
    case forLoop(LiquidForLoop)
    case breakLoop
    case continueLoop
    case assign(name: [UInt8], value: LiquidFilteredExpression)
    case capture(name: [UInt8], body: [LiquidNode])
    case increment(name: [UInt8])
    case decrement(name: [UInt8])
    case block([LiquidNode])
    case include(LiquidInclude)
}

struct LiquidBranch: Sendable {
    var condition: LiquidCondition
    var body: [LiquidNode]
}

struct LiquidCaseBlock: Sendable {
    /// Nil for `else`.
    var values: [LiquidExpression]?
    var body: [LiquidNode]
}

struct LiquidForLoop: Sendable {
    /// `variable-collection` as written: `forloop.name`, and the key `offset: continue` resumes from.
    var name: [UInt8]
    var offsetContinues: Bool
    var variable: [UInt8]
    var collection: LiquidExpression
    var limit: LiquidExpression?
    var offset: LiquidExpression?
    var reversed: Bool
    var body: [LiquidNode]
    var otherwise: [LiquidNode]?
}

/// `include` (shares the caller's variables) or `render` (isolated): snippets come only from
/// `TemplateOptions.snippets`, compiled with the template.
struct LiquidInclude: Sendable {
    /// The snippet's name, or nil when `include` names it with a variable.
    var snippet: String?
    var snippetExpression: LiquidExpression?
    var isolated: Bool
    /// `with expr [as name]` or `for expr [as name]`.
    var subject: LiquidExpression?
    var subjectIsLoop: Bool
    var alias: [UInt8]?
    var arguments: [(name: [UInt8], value: LiquidExpression)]
}

indirect enum LiquidCondition: Sendable {
    case truthy(LiquidExpression)
    case compare(LiquidExpression, LiquidOperator, LiquidExpression)
    /// `a and b or c …`: terms in source order, each with the word joining it to the previous
    /// one. Kept flat (not a right-nested tree), so a 100,000-term chain neither parses, renders
    /// nor deallocates by recursion.
    case chain(first: LiquidCondition, rest: [(isAnd: Bool, term: LiquidCondition)])
    case not(LiquidCondition)
}

enum LiquidOperator: Sendable {
    case equal, notEqual, less, greater, lessOrEqual, greaterOrEqual, contains
}

/// A value: a literal, a variable path, or a range.
indirect enum LiquidExpression: Sendable {
    case literal(LiquidValue)
    case variable(LiquidVariable)
    case range(LiquidExpression, LiquidExpression)
}

/// A variable lookup: a root name and steps, pre-parsed. `jsonPath` is the whole lookup as one
/// `JSONPath` when every step is static, so the common case is a single `value(at:)` call.
struct LiquidVariable: Sendable {
    enum Step: Sendable {
        case key([UInt8])
        case index(Int)
        case dynamic(LiquidExpression)
    }
    var root: [UInt8]
    /// A root looked up by a computed name, `{{ [key] }}`.
    var rootExpression: LiquidExpression?
    var steps: [Step]
    var jsonPath: JSONPath?
    /// The lookup as written, for strict-mode errors.
    var text: String
}

struct LiquidFilteredExpression: Sendable {
    var base: LiquidExpression
    var filters: [LiquidFilterCall]
}

struct LiquidFilterCall: Sendable {
    var filter: LiquidFilter
    var arguments: [LiquidExpression] {
        didSet { literalArguments = Self.literals(arguments) }
    }
    var keywordArguments: [(name: [UInt8], value: LiquidExpression)]
    /// The arguments' values when every one is a literal (`default: 'there'`, `truncate: 20`):
    /// built once at compile time so a render passes them without building an array.
    private(set) var literalArguments: [LiquidValue]?

    init(filter: LiquidFilter, arguments: [LiquidExpression], keywordArguments: [(name: [UInt8], value: LiquidExpression)]) {
        self.filter = filter
        self.arguments = arguments
        self.keywordArguments = keywordArguments
        self.literalArguments = Self.literals(arguments)
    }

    private static func literals(_ arguments: [LiquidExpression]) -> [LiquidValue]? {
        var values: [LiquidValue] = []
        for argument in arguments {
            guard case .literal(let value) = argument else { return nil }
            values.append(value)
        }
        return values
    }
}
