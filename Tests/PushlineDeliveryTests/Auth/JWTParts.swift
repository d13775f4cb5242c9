import Foundation
import PushlineCore

/// A JWT taken apart for checking, decoded independently of the code under test (Foundation's
/// base64 after undoing the URL alphabet).
struct JWTParts {
    let header: JSONValue
    let claims: JSONValue
    let signingInput: [UInt8]
    let signature: Data
    let segments: [String]

    init(_ jwt: some StringProtocol) throws {
        let segments = String(jwt).split(separator: Character("."), omittingEmptySubsequences: false).map { String($0) }
        guard segments.count == 3 else { throw Malformed(reason: "\(segments.count) segments") }
        for segment in segments where segment.contains("=") || segment.contains("+") || segment.contains("/") {
            throw Malformed(reason: "not unpadded base64url")
        }
        self.segments = segments
        header = try JSONDocument(bytes: Array(try Self.decode(segments[0]))).root
        claims = try JSONDocument(bytes: Array(try Self.decode(segments[1]))).root
        signingInput = Array((segments[0] + "." + segments[1]).utf8)
        signature = try Self.decode(segments[2])
    }

    struct Malformed: Error { let reason: String }

    static func decode(_ segment: String) throws -> Data {
        var text = segment.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while text.count % 4 != 0 { text += "=" }
        guard let data = Data(base64Encoded: text) else { throw Malformed(reason: "bad base64") }
        return data
    }

    /// The member names of an object, sorted.
    static func keys(_ value: JSONValue) -> [String] {
        value.members.compactMap { $0.key.stringValue }.sorted()
    }
}
