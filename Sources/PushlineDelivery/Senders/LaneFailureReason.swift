/// The `failed` reasons a lane produces itself (besides the provider's own reason for a
/// permanent or configuration answer, and `RetryPolicy.GiveUpReason`'s codes). Stable codes:
/// they go into `failed.ndjson` and the summary's counts. The run's stop (drain, cancel) is
/// never a failure: a request it kept from being sent or answered settles unsent
/// (`DeliveryOutcome.runStoppedReason`), and a resume sends it.
public enum LaneFailureReason {
    /// The lane stopped (a configuration error: wrong key, certificate, project, permissions)
    /// before this request got an answer; `LaneReport.stoppedBecause` says why.
    public static let providerStopped = "provider_stopped"
    /// The request names a route the lane does not serve (not in the route table, or another
    /// provider's): a sink defect, settled rather than lost.
    public static let noRoute = "no_route"
    /// The target would not be safe in the request path (APNs tokens are hex): never sent.
    public static let badTarget = "bad_target"
    /// A per-request header value holds CR, LF or NUL (or the route's URL or constant headers
    /// do, which the campaign's checks should have refused): never sent.
    public static let badHeader = "bad_header"
    /// A Web Push subscription whose `p256dh` is not a point on P-256 (or whose keys do not
    /// decode): the message could not be encrypted for it, so it is never sent.
    public static let invalidSubscriptionKey = "invalid_subscription_key"
    /// A Web Push endpoint whose host is private, loopback or link-local (without
    /// `allow_private_endpoints`), does not resolve, or is not an https origin: never sent.
    public static let endpointRefused = "endpoint_refused"
    /// More push services than `providers.webpush.push_services` in one run: the requests to
    /// the push services beyond that cap are never sent.
    public static let tooManyPushServices = "too_many_push_services"
    /// The provider answered, but the answer broke a limit of ours and its stream alone was
    /// reset: `answer_rejected_header_list_too_large`, `answer_rejected_body_too_large`,
    /// `answer_rejected_bad_header_bytes`. The provider processed the request (the device may
    /// have been notified: the row is marked `possible_duplicate`); it is not resent, since the
    /// same answer would come again.
    public static func answerRejected(_ problem: TransportAnswerProblem) -> String {
        switch problem {
        case .headerListTooLarge: "answer_rejected_header_list_too_large"
        case .bodyTooLarge: "answer_rejected_body_too_large"
        case .badHeaderBytes: "answer_rejected_bad_header_bytes"
        }
    }
    /// The answer's header block could not be decoded and took its connection down with it
    /// (an HPACK failure is a connection error): the provider processed the request (marked
    /// `possible_duplicate`); it is not resent, so the same answer cannot take down another
    /// connection's streams.
    public static let answerBrokeConnection = "answer_broke_connection"

    /// Every code a lane can write by itself, for documentation and tests.
    public static let all = [
        providerStopped, noRoute, badTarget, badHeader, invalidSubscriptionKey, endpointRefused, tooManyPushServices,
        answerRejected(.headerListTooLarge), answerRejected(.bodyTooLarge), answerRejected(.badHeaderBytes), answerBrokeConnection,
        RetryPolicy.GiveUpReason.attemptsExhausted.rawValue,
        RetryPolicy.GiveUpReason.deadlineExceeded.rawValue,
        RetryPolicy.GiveUpReason.ambiguousDeliveryAlreadyResent.rawValue,
        RetryPolicy.GiveUpReason.refusalsExhausted.rawValue,
    ]
}
