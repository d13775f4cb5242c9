import PushlineCore

/// Classifies an FCM v1 answer: status, `retry-after`, and the body: on success
/// `{"name": "projects/…/messages/…"}`, on error a google.rpc.Status
/// `{"error":{"code","message","status","details":[{"@type":"…FcmError","errorCode":…}]}}`
/// (hostile: bounded, any bytes, never a crash).
public enum FCMResponseClassifier {
    static let fcmErrorType = "type.googleapis.com/google.firebase.fcm.v1.FcmError"
    static let badRequestType = "type.googleapis.com/google.rpc.BadRequest"

    /// What the body said, for tests and logs.
    public struct ErrorBody: Sendable, Equatable {
        public var errorCode: FCMErrorCode?
        /// google.rpc.Code name (`UNAUTHENTICATED`, `NOT_FOUND`…).
        public var status: String?
        public var message: String?
        /// A google.rpc.BadRequest detail names `message.token` as the bad field.
        public var tokenFieldViolation: Bool
    }

    /// Only 200 is sent; a status that is neither 200 nor 4xx/5xx is `unexpected_status`
    /// (`ProviderStatus`).
    /// - Parameter bodyTruncatedAt: the transport's `maxResponseBodyBytes` when it cut the body
    ///   there (`TransportResponse.bodyTruncated`): the body is then not read, the status decides.
    public static func classify(
        status: Int, body: some Collection<UInt8>, retryAfter retryAfterHeader: [UInt8]? = nil, bodyTruncatedAt: Int? = nil
    ) -> ResponseClassification {
        let retryAfter = retryAfterHeader.flatMap { RetryAfter(headerValue: $0) }
        switch ProviderStatus(status) {
        case .success:
            // The message name is kept only from a whole body; a 200 is sent either way.
            let name = bodyTruncatedAt != nil ? nil : ResponseBody.jsonObject(body).flatMap { root -> String? in
                guard let value = root["name"], value.kind == .string else { return nil }
                return value.withUnescapedString { ResponseBody.headerString($0, limit: 512) } ?? nil
            }
            return .init(outcome: .sent(providerID: name), status: status, reason: "sent")
        case .noResponse:
            return .init(outcome: .retryable(newConnection: true), status: 0, reason: "no_response", retryAfter: retryAfter)
        case .unexpected:
            return ProviderStatus.unexpectedClassification(status: status, retryAfter: retryAfter)
        case .error:
            break
        }
        if let bodyTruncatedAt {
            let empty = ErrorBody(errorCode: nil, status: nil, message: nil, tokenFieldViolation: false)
            return .init(outcome: outcome(status: status, error: empty), status: status, reason: "http_\(status)",
                         message: ResponseBody.overLimit(bodyTruncatedAt), retryAfter: retryAfter)
        }
        let error = parseError(body)
        let outcome = outcome(status: status, error: error)
        let reason = error.errorCode?.wireName ?? error.status ?? "http_\(status)"
        return .init(outcome: outcome, status: status, reason: reason, message: error.message, retryAfter: retryAfter,
                     providerReason: error.errorCode.map { .fcm($0) })
    }

    /// The FCM table of PROVIDERS.md, then google.rpc status and HTTP status (4xx, 5xx) for
    /// answers without an FcmError detail.
    static func outcome(status: Int, error: ErrorBody) -> ResponseOutcome {
        switch error.errorCode {
        case .invalidArgument?:
            return tokenIsInvalid(error) ? .invalidToken(timestamp: nil) : .permanent
        case .unregistered?, .senderIdMismatch?:
            return .invalidToken(timestamp: nil)
        case .quotaExceeded?:
            return .throttled(.project)
        case .unavailable?, .internal?:
            return .retryable(newConnection: false)
        case .thirdPartyAuthError?:
            return .configurationError
        case .unspecifiedError?, .unknown?, nil:
            break
        }
        switch status {
        case 400: return tokenIsInvalid(error) ? .invalidToken(timestamp: nil) : .permanent
        // Without a detail: the access token expired or is bad. The cache refreshes it once;
        // a 401 to the fresh token becomes a configuration error there.
        case 401: return .refreshCredentials
        // PERMISSION_DENIED: the service account may not send for this project.
        case 403: return .configurationError
        // NOT_FOUND without UNREGISTERED: the project (the URL) does not exist.
        case 404: return .configurationError
        case 429: return .throttled(.provider)
        case 408, 500...599: return .retryable(newConnection: false)
        default: return .permanent
        }
    }

    /// INVALID_ARGUMENT about the token rather than the message: FCM's message says
    /// "The registration token is not a valid FCM registration token", or a BadRequest detail
    /// names the field `message.token`.
    static func tokenIsInvalid(_ error: ErrorBody) -> Bool {
        if error.tokenFieldViolation { return true }
        guard let message = error.message?.lowercased() else { return false }
        return message.contains("registration token") && (message.contains("not a valid") || message.contains("invalid"))
    }

    public static func parseError(_ body: some Collection<UInt8>) -> ErrorBody {
        var result = ErrorBody(errorCode: nil, status: nil, message: nil, tokenFieldViolation: false)
        guard let root = ResponseBody.jsonObject(body), let error = root["error"], error.kind == .object else { return result }
        result.status = ResponseBody.wireString(error["status"])
        result.message = ResponseBody.wireString(error["message"], limit: 300)
        guard let details = error["details"], details.kind == .array else { return result }
        // At most a few details are looked at: the list is the server's.
        for detail in details.elements.prefix(16) where detail.kind == .object {
            guard let type = detail["@type"]?.stringValue else { continue }
            if type == fcmErrorType, result.errorCode == nil, let code = ResponseBody.wireString(detail["errorCode"]) {
                result.errorCode = FCMErrorCode(wireName: code)
            } else if type == badRequestType, let violations = detail["fieldViolations"], violations.kind == .array {
                for violation in violations.elements.prefix(16) where violation.kind == .object {
                    if violation["field"]?.stringValue == "message.token" { result.tokenFieldViolation = true }
                }
            }
        }
        return result
    }
}
