public import PushlineCore

extension SkipReason {
    /// `run --validate-only`: APNs has no validate-only mode, so its requests are not sent. The
    /// delivery sink settles each APNs request of such a run with this reason (counted as skipped,
    /// reconciled), while FCM requests go out with `validate_only: true`.
    public static let validateOnly = SkipReason("validate_only", "not sent: --validate-only, and APNs has no validate-only mode")
}
