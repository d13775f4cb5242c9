import Foundation
import PushlineCore

/// Compares a reader value with what Foundation's JSONSerialization decoded from the same text.
enum FoundationOracle {
    static func matches(_ value: JSONValue, _ object: Any) -> Bool {
        switch value.kind {
        case .object:
            guard let dictionary = object as? [String: Any] else { return false }
            // Foundation keeps one entry per distinct key, as the reader's lookup does.
            let keys = Set(value.members.compactMap { $0.key.stringValue })
            guard keys.count == dictionary.count else { return false }
            return dictionary.allSatisfy { key, element in
                guard let member = value[key] else { return false }
                return matches(member, element)
            }
        case .array:
            guard let array = object as? [Any], array.count == value.count else { return false }
            return zip(value.elements, array).allSatisfy { matches($0, $1) }
        case .string:
            guard let string = object as? String, let decoded = value.stringValue else { return false }
            return Array(decoded.utf8) == Array(string.utf8)
        case .number:
            guard let number = object as? NSNumber else { return false }
            guard let double = value.doubleValue else { return number.doubleValue.isInfinite }
            // swift-corelibs-foundation does not round correctly (it reads -0.000…01 as
            // -1.0000000000000005e-78, and is further off at large exponents), so it only
            // confirms the magnitude; exact values are checked against their sources elsewhere.
            let expected = number.doubleValue
            return expected == double || abs(expected - double) <= 1e-12 * max(abs(expected), abs(double))
        case .true, .false:
            return (object as? Bool) == value.boolValue
        case .null:
            return object is NSNull
        }
    }

}
