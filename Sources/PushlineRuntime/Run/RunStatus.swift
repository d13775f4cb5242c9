public import PushlineCore

/// How a run ended. `RunReport.exit` maps it (and, for `failed`, the cause) to the process exit
/// code (`PushlineExit`, docs/exit-codes.md).
public enum RunStatus: String, Sendable {
    /// Every device was written or sent (skips by design included).
    case completed
    /// The run finished; some lines or devices were rejected (see rejects.ndjson).
    case completedWithRejects = "completed_with_rejects"
    /// A sending run finished; some devices failed (see failed.ndjson: refused by the provider,
    /// or not delivered within the retry budget). Invalid tokens are not failures.
    case completedWithFailures = "completed_with_failures"
    /// The audience could not be read to its end (truncated or corrupt gzip, unreadable file);
    /// everything before the failure was processed and written.
    case inputError = "input_error"
    /// Results could not be written, the counts did not reconcile, or a provider stopped
    /// (a configuration error such as a wrong key: its remaining devices failed unsent).
    case failed
    /// Stopped by SIGTERM / SIGINT: every device read has its outcome (those not settled with
    /// their provider are `unsent`, listed in unsent.ndjson), the results and the summary are
    /// written under their final names; lines after the stop were not read.
    case stopped

    /// The exit code of this status; `failed` has several causes, so a run's code is
    /// `RunReport.exit`, which knows which one (`outputError` when none was named).
    public var exit: PushlineExit {
        switch self {
        case .completed: .ok
        case .completedWithRejects: .completedWithRejects
        case .completedWithFailures: .completedWithFailures
        case .inputError: .inputError
        case .failed: .outputError
        case .stopped: .stopped
        }
    }
}
