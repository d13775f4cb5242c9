import PushlineCore

/// A JWS in compact form (`header.claims.signature`), split and decoded but not yet verified.
///
/// Hostile input is refused, never trapped on: sizes are bounded, every part must be unpadded
/// base64url, header and claims must be JSON objects.
struct CompactJWT {
    let header: JSONValue
    let claims: JSONValue
    let signature: [UInt8]
    /// `header.claims` as sent: the bytes the signature covers.
    let signingInput: Substring.UTF8View

    static let maxLength = 16_384

    init?(_ text: Substring) {
        guard text.utf8.count <= Self.maxLength else { return nil }
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3,
              let headerBytes = Base64URL.decode(parts[0]),
              let claimBytes = Base64URL.decode(parts[1]),
              let signature = Base64URL.decode(parts[2]),
              let header = try? JSONDocument(bytes: headerBytes, maxDepth: 8).root, header.kind == .object,
              let claims = try? JSONDocument(bytes: claimBytes, maxDepth: 8).root, claims.kind == .object
        else { return nil }
        self.header = header
        self.claims = claims
        self.signature = signature
        self.signingInput = text[text.startIndex..<parts[1].endIndex].utf8
    }

    /// An integer claim (`iat`, `exp`); JSON numbers with a fraction are refused, as Apple and
    /// Google expect whole seconds.
    func integerClaim(_ name: String) -> Int64? {
        claims[name]?.int64Value
    }
}
