/// The status rule APNs and FCM share, before either provider's table: success is exactly 200
/// (PROVIDERS.md); only 4xx and 5xx are errors the tables describe.
enum ProviderStatus: Equatable {
    /// 200: delivered to the provider.
    case success
    /// 0: no response arrived (reset stream, GOAWAY, transport error).
    case noResponse
    /// 400–599: the provider's table decides, by reason and status.
    case error
    /// Anything else (1xx, 2xx other than 200, 3xx, 600 and above): an answer neither provider
    /// gives, which cannot be read as delivered.
    case unexpected

    init(_ status: Int) {
        switch status {
        case 200: self = .success
        case 0: self = .noResponse
        case 400...599: self = .error
        default: self = .unexpected
        }
    }

    /// The failure of an `unexpected` status: permanent, not retried (docs/delivery.md, "Only
    /// 200 is sent"). A 2xx may mean the provider took the request, so a resend could notify the
    /// device twice; a redirect or a 1xx repeats on every resend to the same URL. The body is
    /// not read: a reason in it belongs to no answer the tables know.
    static func unexpectedClassification(status: Int, retryAfter: RetryAfter?) -> ResponseClassification {
        ResponseClassification(
            outcome: .permanent, status: status, reason: ResponseClassification.unexpectedStatusReason,
            message: "HTTP \(status) is not an answer the provider documents; only 200 is sent", retryAfter: retryAfter
        )
    }

}
