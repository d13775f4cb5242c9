/// Why FCM authentication cannot be set up or go on. Names the file and field, quotes what a
/// server said only through `PrintableText` (bounded, token-like runs redacted); never holds
/// key bytes, the assertion or an access token.
public struct FCMAuthError: Error, Sendable, Equatable, CustomStringConvertible {
    private enum Kind: Sendable, Equatable {
        case serviceAccountFile(path: String, problem: String)
        case serviceAccountField(path: String, field: String, problem: String)
        case signingFailed
        case tokenEndpointRejected(status: Int, detail: String)
        case tokenEndpointUnavailable(status: Int, detail: String)
        case tokenResponseInvalid(problem: String)
        case unauthorizedAfterRefresh(clientEmail: String)
    }

    private let kind: Kind
    private init(_ kind: Kind) { self.kind = kind }

    static func serviceAccountFile(path: String, problem: String) -> Self {
        .init(.serviceAccountFile(path: path, problem: problem))
    }
    static func serviceAccountField(path: String, field: String, problem: String) -> Self {
        .init(.serviceAccountField(path: path, field: field, problem: problem))
    }
    static var signingFailed: Self { .init(.signingFailed) }
    static func tokenEndpointRejected(status: Int, detail: String) -> Self {
        .init(.tokenEndpointRejected(status: status, detail: detail))
    }
    static func tokenEndpointUnavailable(status: Int, detail: String) -> Self {
        .init(.tokenEndpointUnavailable(status: status, detail: detail))
    }
    static func tokenResponseInvalid(_ problem: String) -> Self { .init(.tokenResponseInvalid(problem: problem)) }
    static func unauthorizedAfterRefresh(clientEmail: String) -> Self {
        .init(.unauthorizedAfterRefresh(clientEmail: clientEmail))
    }

    /// True when waiting and trying again may help (the token endpoint was unreachable, busy or
    /// failing); false when the configuration must change: stop the provider.
    public var isRetryable: Bool {
        if case .tokenEndpointUnavailable = kind { true } else { false }
    }

    public var description: String {
        switch kind {
        case .serviceAccountFile(let path, let problem):
            "FCM service account file '\(PrintableText.bounded(path, limit: 512, redactingTokens: false))' \(problem)"
        case .serviceAccountField(let path, let field, let problem):
            "FCM service account file '\(PrintableText.bounded(path, limit: 512, redactingTokens: false))': \(field) \(problem)"
        case .signingFailed:
            "FCM OAuth assertion could not be signed"
        case .tokenEndpointRejected(let status, let detail):
            "FCM OAuth token endpoint refused the service account (HTTP \(status)\(detail.isEmpty ? "" : ": " + detail)); check the service account file and that it may send with Firebase Cloud Messaging"
        case .tokenEndpointUnavailable(let status, let detail):
            status == 0
                ? "FCM OAuth token endpoint did not answer\(detail.isEmpty ? "" : ": " + detail)"
                : "FCM OAuth token endpoint answered HTTP \(status)\(detail.isEmpty ? "" : ": " + detail)"
        case .tokenResponseInvalid(let problem):
            "FCM OAuth token endpoint answered 200 with an unusable token response: \(problem)"
        case .unauthorizedAfterRefresh(let email):
            "FCM answered 401 to a freshly obtained access token of \(PrintableText.bounded(email, limit: 320, redactingTokens: false)): the service account may not send for this project (check project_id and its roles); stopping this provider"
        }
    }
}
