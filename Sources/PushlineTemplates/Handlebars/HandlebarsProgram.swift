import PushlineCore

/// A compiled template: a tree of nodes whose lookups and helper calls are resolved at compile time.
typealias HandlebarsProgram = [HandlebarsNode]

indirect enum HandlebarsNode: Sendable {
    /// Literal bytes, copied as they are.
    case text([UInt8])
    /// `{{path}}`, the common case, kept apart and boxed: walking the program then retains one
    /// object instead of copying the path's arrays.
    case lookup(HandlebarsLookup)
    /// `{{expr}}` (escaped when the template HTML-escapes) or `{{{expr}}}` / `{{& expr}}`.
    case value(HandlebarsExpression, escaped: Bool)
    case block(HandlebarsBlock)
    /// `{{> name context}}`: `partial` indexes the template's partial table.
    case partial(index: Int, context: HandlebarsExpression?)
}

final class HandlebarsLookup: Sendable {
    let path: HandlebarsPath
    let escaped: Bool
    /// Set for a plain key path from the current context (`customer.first_name`): the renderer
    /// then looks it up straight from the context's JSON, the hot path of every campaign.
    let contextPath: JSONPath?

    init(path: HandlebarsPath, escaped: Bool) {
        self.path = path
        self.escaped = escaped
        if case .context(depth: 0, _) = path.base { contextPath = path.jsonPath } else { contextPath = nil }
    }
}

struct HandlebarsBlock: Sendable {
    enum Kind: Sendable {
        case `if`(includeZero: Bool)
        case unless(includeZero: Bool)
        case each
        case with
        /// Mustache section `{{#name}}` (Handlebars' blockHelperMissing): true keeps the context,
        /// false/null/empty array takes the inverse, an array iterates, anything else becomes the context.
        case section
    }

    var kind: Kind
    /// The block's argument (the path or helper call after `#if`, or the section's name).
    var subject: HandlebarsExpression
    var body: HandlebarsProgram
    var inverse: HandlebarsProgram
    /// Whether `as |a b|` was given: the iteration then binds block parameters.
    var blockParamCount: Int
}

indirect enum HandlebarsExpression: Sendable {
    case path(HandlebarsPath)
    case literal(HandlebarsValue)
    case helper(HandlebarsHelper, [HandlebarsExpression], hash: [HandlebarsHashArgument])
}

struct HandlebarsHashArgument: Sendable {
    var key: [UInt8]
    var value: HandlebarsExpression
}

/// A path resolved at compile time: where it starts and the segments that follow.
struct HandlebarsPath: Sendable {
    enum Base: Sendable, Equatable {
        /// The context `depth` levels up (`../` count); `scoped` when written with `this`, `.` or
        /// `../`, which turns off the Mustache-compatible walk up the context stack.
        case context(depth: Int, scoped: Bool)
        /// `@index`, `@key`, `@first`, `@last` (`depth` counts `@../`).
        case data(HandlebarsDataVariable, depth: Int)
        /// `@root`
        case root
        /// A block parameter: `scopes` block-parameter scopes up, `slot` 0 or 1.
        case blockParameter(scopes: Int, slot: Int)
    }

    var base: Base
    var segments: [HandlebarsSegment]
    /// The same segments as a `JSONPath`, when every segment is a plain key (the common case):
    /// the lookup then goes through `JSONValue.value(at:)` in one call.
    var jsonPath: JSONPath?
    /// The path as written, for error messages.
    var text: String
}

enum HandlebarsDataVariable: Sendable, Equatable {
    case index, key, first, last
    /// Any other `@name`: runtime data, which Pushline does not pass; always missing.
    case unknown
}

/// One step of a path: a member name, which also works as an array index when it is all digits
/// (`list.0`, `list.[0]`), as in JavaScript.
struct HandlebarsSegment: Sendable {
    var key: [UInt8]
    var index: Int?
}
