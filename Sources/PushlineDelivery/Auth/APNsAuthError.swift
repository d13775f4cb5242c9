/// Why APNs token authentication cannot be set up or go on. Names files and fields, never
/// key bytes or a token.
public struct APNsAuthError: Error, Sendable, Equatable, CustomStringConvertible {
    private enum Kind: Sendable, Equatable {
        case keyFile(path: String, problem: String)
        case keyNotP256(path: String)
        case invalidIdentifier(field: String, problem: String)
        case signingFailed
        case expiredTwice(keyID: String, issuedAtUnixTime: Int64)
    }

    private let kind: Kind
    private init(_ kind: Kind) { self.kind = kind }

    static func keyFile(path: String, problem: String) -> Self { .init(.keyFile(path: path, problem: problem)) }
    static func keyNotP256(path: String) -> Self { .init(.keyNotP256(path: path)) }
    static func invalidIdentifier(field: String, problem: String) -> Self {
        .init(.invalidIdentifier(field: field, problem: problem))
    }
    static var signingFailed: Self { .init(.signingFailed) }
    static func expiredTwice(keyID: String, issuedAtUnixTime: Int64) -> Self {
        .init(.expiredTwice(keyID: keyID, issuedAtUnixTime: issuedAtUnixTime))
    }

    /// Whether sending to the provider must stop (every other case fails before sending starts).
    public var stopsProvider: Bool { if case .expiredTwice = kind { true } else { false } }

    public var description: String {
        switch kind {
        case .keyFile(let path, let problem):
            "APNs key file '\(PrintableText.bounded(path, limit: 512, redactingTokens: false))' \(problem)"
        case .keyNotP256(let path):
            "APNs key file '\(PrintableText.bounded(path, limit: 512, redactingTokens: false))' is not a PKCS#8 P-256 private key in PEM form (an AuthKey_<key id>.p8 file from Apple)"
        case .invalidIdentifier(let field, let problem):
            "APNs \(field) \(problem)"
        case .signingFailed:
            "APNs provider token could not be signed"
        case .expiredTwice(let keyID, let iat):
            "APNs answered ExpiredProviderToken to two freshly signed provider tokens of key \(keyID) (the last with iat \(iat)): the system clock is probably more than an hour off, or the key does not belong to the team; stopping this provider"
        }
    }
}
