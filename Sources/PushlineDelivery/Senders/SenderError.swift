/// Why a lane could not be built from its configuration (before anything is sent). Names the
/// provider and the setting; never holds key material.
public struct SenderError: Error, Sendable, Equatable, CustomStringConvertible {
    private enum Kind: Sendable, Equatable {
        case credentialsMismatch(provider: String, credentials: String)
        case invalidEndpoint(provider: String, endpoint: String, problem: String)
        case tokenEndpointNotTLS(uri: String)
        case transport(provider: String, detail: String)
    }

    private let kind: Kind
    private init(_ kind: Kind) { self.kind = kind }

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
        case .credentialsMismatch(let provider, let credentials):
            "provider \(provider) was given \(credentials) credentials"
        case .invalidEndpoint(let provider, let endpoint, let problem):
            "\(provider) endpoint '\(PrintableText.bounded(endpoint, limit: 200, redactingTokens: false))' \(problem)"
        case .tokenEndpointNotTLS(let uri):
            "token_uri '\(PrintableText.bounded(uri, limit: 200, redactingTokens: false))' is plain http://: the sender exchanges tokens over HTTPS only (the emulator serves https://…/token and https://…/auth/O2/token)"
        case .transport(let provider, let detail):
            "\(provider) transport: \(detail)"
        }
    }
}
