/// Why a lane could not be built from its configuration (before anything is sent). Names the
/// provider and the setting; never holds key material.
public struct SenderError: Error, Sendable, Equatable, CustomStringConvertible {
    private enum Kind: Sendable, Equatable {
        case unsupportedProvider(String)
        case credentialsMismatch(provider: String, credentials: String)
        case invalidEndpoint(provider: String, endpoint: String, problem: String)
        case tokenEndpointNotTLS(uri: String)
        case transport(provider: String, detail: String)
    }

    private let kind: Kind
    private init(_ kind: Kind) { self.kind = kind }

    static func unsupportedProvider(_ provider: String) -> Self { .init(.unsupportedProvider(provider)) }
    static func credentialsMismatch(provider: String, credentials: String) -> Self {
        .init(.credentialsMismatch(provider: provider, credentials: credentials))
    }
    static func invalidEndpoint(provider: String, endpoint: String, problem: String) -> Self {
        .init(.invalidEndpoint(provider: provider, endpoint: endpoint, problem: problem))
    }
    static func tokenEndpointNotTLS(uri: String) -> Self { .init(.tokenEndpointNotTLS(uri: uri)) }
    static func transport(provider: String, detail: String) -> Self { .init(.transport(provider: provider, detail: detail)) }

    public var description: String {
        switch kind {
        case .unsupportedProvider(let provider):
            "no sender for provider \(provider) yet (APNs, FCM and Web Push are sent; use --dry-run for the others)"
        case .credentialsMismatch(let provider, let credentials):
            "provider \(provider) was given \(credentials) credentials"
        case .invalidEndpoint(let provider, let endpoint, let problem):
            "\(provider) endpoint '\(PrintableText.bounded(endpoint, limit: 200, redactingTokens: false))' \(problem)"
        case .tokenEndpointNotTLS(let uri):
            "FCM service account token_uri '\(PrintableText.bounded(uri, limit: 200, redactingTokens: false))' is plain http://: the sender talks HTTP/2 over TLS only (the emulator serves https://…/token)"
        case .transport(let provider, let detail):
            "\(provider) transport: \(detail)"
        }
    }
}
