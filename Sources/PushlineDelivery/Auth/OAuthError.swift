/// Why OAuth authentication (FCM's service account, ADM's client credentials) cannot be set up
/// or go on. Names the file and field, quotes what a server said only through `PrintableText`
/// (bounded, token-like runs redacted); never holds key bytes, a secret, the assertion or an
/// access token.
public struct OAuthError: Error, Sendable, Equatable, CustomStringConvertible {
    private enum Kind: Sendable, Equatable {
        case serviceAccountFile(path: String, problem: String)
        case serviceAccountField(path: String, field: String, problem: String)
        case clientSecretFile(path: String, problem: String)
        case admSetting(field: String, problem: String)
        case signingFailed
        case tokenEndpointRejected(service: OAuthService, status: Int, detail: String)
        case tokenEndpointUnavailable(service: OAuthService, status: Int, detail: String)
        case tokenResponseInvalid(service: OAuthService, problem: String)
        case unauthorizedAfterRefresh(service: OAuthService, client: String)
    }

    private let kind: Kind
    private init(_ kind: Kind) { self.kind = kind }

    static func serviceAccountFile(path: String, problem: String) -> Self {
        .init(.serviceAccountFile(path: path, problem: problem))
    }
    static func serviceAccountField(path: String, field: String, problem: String) -> Self {
        .init(.serviceAccountField(path: path, field: field, problem: problem))
    }
    static func clientSecretFile(path: String, problem: String) -> Self {
        .init(.clientSecretFile(path: path, problem: problem))
    }
    static func admSetting(_ field: String, problem: String) -> Self {
        .init(.admSetting(field: field, problem: problem))
    }
    static var signingFailed: Self { .init(.signingFailed) }
    static func tokenEndpointRejected(_ service: OAuthService, status: Int, detail: String) -> Self {
        .init(.tokenEndpointRejected(service: service, status: status, detail: detail))
    }
    static func tokenEndpointUnavailable(_ service: OAuthService, status: Int, detail: String) -> Self {
        .init(.tokenEndpointUnavailable(service: service, status: status, detail: detail))
    }
    static func tokenResponseInvalid(_ service: OAuthService, _ problem: String) -> Self {
        .init(.tokenResponseInvalid(service: service, problem: problem))
    }
    static func unauthorizedAfterRefresh(_ service: OAuthService, client: String) -> Self {
        .init(.unauthorizedAfterRefresh(service: service, client: client))
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
        case .clientSecretFile(let path, let problem):
            "ADM client secret file '\(PrintableText.bounded(path, limit: 512, redactingTokens: false))' \(problem)"
        case .admSetting(let field, let problem):
            "providers.adm.\(field) \(problem)"
        case .signingFailed:
            "FCM OAuth assertion could not be signed"
        case .tokenEndpointRejected(let service, let status, let detail):
            "\(service.rawValue) OAuth token endpoint refused \(service.credentialsName) (HTTP \(status)\(detail.isEmpty ? "" : ": " + detail)); \(service.credentialsHint)"
        case .tokenEndpointUnavailable(let service, let status, let detail):
            status == 0
                ? "\(service.rawValue) OAuth token endpoint did not answer\(detail.isEmpty ? "" : ": " + detail)"
                : "\(service.rawValue) OAuth token endpoint answered HTTP \(status)\(detail.isEmpty ? "" : ": " + detail)"
        case .tokenResponseInvalid(let service, let problem):
            "\(service.rawValue) OAuth token endpoint answered 200 with an unusable token response: \(problem)"
        case .unauthorizedAfterRefresh(.fcm, let client):
            "FCM answered 401 to a freshly obtained access token of \(PrintableText.bounded(client, limit: 320, redactingTokens: false)): the service account may not send for this project (check project_id and its roles); stopping this provider"
        case .unauthorizedAfterRefresh(.adm, let client):
            "ADM answered 401 to a freshly obtained access token of client \(PrintableText.bounded(client, limit: 320, redactingTokens: false)): the security profile may not send with Device Messaging (check client_id, client_secret_file and that ADM is enabled for the app); stopping this provider"
        }
    }
}

/// The services whose access tokens come from an OAuth token endpoint.
public enum OAuthService: String, Sendable, Equatable {
    case fcm = "FCM"
    case adm = "ADM"

    var credentialsName: String {
        switch self {
        case .fcm: "the service account"
        case .adm: "the client credentials"
        }
    }

    var credentialsHint: String {
        switch self {
        case .fcm: "check the service account file and that it may send with Firebase Cloud Messaging"
        case .adm: "check client_id and client_secret_file (the app's security profile) and token_uri"
        }
    }
}
