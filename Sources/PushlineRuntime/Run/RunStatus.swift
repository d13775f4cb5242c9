/// How a run ended, and the process exit code each outcome maps to (documented in the README).
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

    public var exitCode: Int32 {
        switch self {
        case .completed: 0
        case .completedWithRejects, .completedWithFailures: 3
        case .inputError: 4
        case .failed: 5
        case .stopped: 6
        }
    }

    /// Exit code of `validate` and `run` when the pipeline itself is invalid.
    public static let invalidPipelineExitCode: Int32 = 2
}
