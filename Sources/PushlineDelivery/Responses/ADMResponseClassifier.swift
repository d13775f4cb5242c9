import PushlineCore

/// Classifies an Amazon Device Messaging answer (PROVIDERS.md, "Amazon Device Messaging"):
/// on success `{"registrationID": "…"}`, on error `{"reason": "…"}` (hostile: bounded, any
/// bytes, never a crash).
///
/// - 200: sent. A `registrationID` other than the one sent means the app instance registered
///   anew: the message was delivered, and the old id must be replaced (`replacementToken`).
/// - 400 `InvalidRegistrationId`, `Unregistered`: `invalid-tokens.ndjson`; any other 400
///   (`InvalidData`, `InvalidConsolidationKey`, `InvalidExpiration`, `InvalidType`…): failed.
/// - 401 (`AccessTokenExpired`): a new access token, then resend (a second 401 to a fresh one
///   stops the lane, as FCM's does).
/// - 403: the security profile may not send: stop the lane.
/// - 413 `MessageTooLarge`: failed.
/// - 429 `MaxRateExceeded`: slow down and retry (Retry-After); 408 and 5xx: retry.
/// - other 4xx: failed; anything but 200, 4xx and 5xx: `unexpected_status`.
public enum ADMResponseClassifier {
    /// Reasons that say the registration id is no longer (or never was) valid.
    static let invalidTokenReasons: Set<String> = ["InvalidRegistrationId", "Unregistered"]

    /// - `sentRegistrationID`: the id the request was sent to (its path), to tell a replaced one.
    /// - `requestID`: the `x-amzn-RequestId` header, kept as the provider's id of the message.
    public static func classify(
        status: Int, body: some Collection<UInt8>, sentRegistrationID: some Collection<UInt8>,
        requestID: [UInt8]? = nil, retryAfter retryAfterHeader: [UInt8]? = nil, bodyTruncatedAt: Int? = nil
    ) -> ResponseClassification {
        let retryAfter = retryAfterHeader.flatMap { RetryAfter(headerValue: $0) }
        switch ProviderStatus(status) {
        case .success:
            let providerID = requestID.flatMap { ResponseBody.headerString($0) }
            let replacement = bodyTruncatedAt != nil ? nil : registrationID(in: body).flatMap { returned in
                returned.utf8.elementsEqual(sentRegistrationID) ? nil : returned
            }
            return .init(outcome: .sent(providerID: providerID), status: status, reason: "sent", replacementToken: replacement)
        case .noResponse:
            return .init(outcome: .retryable(newConnection: true), status: 0, reason: "no_response", retryAfter: retryAfter)
        case .unexpected:
            return ProviderStatus.unexpectedClassification(status: status, retryAfter: retryAfter)
        case .error:
            break
        }
        let wireReason = bodyTruncatedAt != nil ? nil : ResponseBody.jsonObject(body).flatMap { ResponseBody.wireString($0["reason"]) }
        let reason = wireReason ?? "http_\(status)"
        let message = bodyTruncatedAt.map(ResponseBody.overLimit)
        let outcome: ResponseOutcome
        switch status {
        case 400:
            outcome = wireReason.map(invalidTokenReasons.contains) == true ? .invalidToken(timestamp: nil) : .permanent
        case 401:
            outcome = .refreshCredentials
        case 403:
            outcome = .configurationError
        case 429:
            outcome = .throttled(.provider)
        case 408, 500...599:
            outcome = .retryable(newConnection: false)
        default:
            outcome = .permanent
        }
        return .init(outcome: outcome, status: status, reason: reason, message: message, retryAfter: retryAfter)
    }

    /// The `registrationID` of a success body, when it is one a request could be sent to again
    /// (unreserved characters, at most 4096 bytes); nil otherwise.
    static func registrationID(in body: some Collection<UInt8>) -> String? {
        guard let root = ResponseBody.jsonObject(body), let value = root["registrationID"], value.kind == .string else { return nil }
        return value.withUnescapedString { bytes -> String? in
            guard !bytes.isEmpty, bytes.count <= 4096, bytes.allSatisfy(LaneRoutes.isPathSafe) else { return nil }
            return String(decoding: bytes, as: UTF8.self)
        } ?? nil
    }
}
