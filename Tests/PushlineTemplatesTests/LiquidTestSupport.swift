import Foundation
import PushlineCore
@testable import PushlineTemplates

/// JSON → `LiquidValue` through Foundation: an independent reader for test contexts.
enum LiquidTestJSON {
    static func value(_ any: Any) -> LiquidValue {
        switch any {
        case is NSNull: return .null
        case let s as String: return LiquidValue(s)
        case let n as NSNumber:
            if isBool(n) { return .bool(n.boolValue) }
            if ["d", "f"].contains(String(cString: n.objCType)) { return .double(n.doubleValue) }
            return .int(n.intValue)
        case let a as [Any]: return .array(a.map(value))
        case let d as [String: Any]:
            var o = LiquidObject()
            for key in d.keys.sorted() { o[Array(key.utf8)] = value(d[key]!) }
            return .object(o)
        default: return .null
        }
    }

    private static func isBool(_ n: NSNumber) -> Bool {
        #if canImport(Darwin)
        return CFGetTypeID(n) == CFBooleanGetTypeID()
        #else
        return n.objCType.pointee == UInt8(ascii: "c") || String(cString: n.objCType) == "B"
        #endif
    }

    static func parse(_ text: String) throws -> LiquidValue {
        value(try JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed]))
    }
}

/// Compiles and renders a template against a JSON context, returning the text.
func renderLiquid(_ template: String, _ json: String = "{}", options: TemplateOptions = TemplateOptions()) throws -> String {
    let compiled = try LiquidTemplate(compiling: template, options: options)
    var output = RenderOutput(mode: .raw, limit: options.maxOutputBytes)
    try compiled.render(root: try LiquidTestJSON.parse(json), into: &output)
    return String(decoding: output.bytes, as: UTF8.self)
}
