/// The exit code of every `pushline` command and of `pushline-emulator`: one code, one cause.
///
/// docs/exit-codes.md holds the table; a test parses it and compares it with these cases, so the
/// two cannot drift. Codes 0 to 6 keep the meaning scripts already relied on; the causes that used
/// to share a code have their own now. Never renumber a case: scripts test these numbers.
public enum PushlineExit: Int32, CaseIterable, Sendable, CustomStringConvertible {
    /// Done (`run`: every device written or sent, skips by design included).
    case ok = 0
    /// A failure inside pushline itself: the counts did not reconcile, a sending lane broke its
    /// contract, or an error no command expected. A bug: report it.
    case internalError = 1
    /// The pipeline (a template in it, its providers or credentials), or the template of
    /// `template render`, is invalid or unreadable, or no audience is named; nothing was read.
    case invalidPipeline = 2
    /// `run` finished; some lines or devices were rejected (rejects.ndjson).
    case completedWithRejects = 3
    /// The audience could not be read to its end, or the line asked for could not be read; what
    /// came before was processed and written.
    case inputError = 4
    /// Results, summary.json, standard output or a generated file could not be written.
    case outputError = 5
    /// `run` was stopped by SIGTERM / SIGINT; its results and summary are written.
    case stopped = 6
    /// A sending `run` finished; some devices failed (failed.ndjson). Rejects may be there too.
    case completedWithFailures = 7
    /// A provider's sender could not start, or stopped mid-run (a wrong key, refused
    /// credentials): its remaining devices failed unsent.
    case providerStopped = 8
    /// The output folder is in use by another run, or holds an unfinished run's results (pass
    /// `--force` to move them aside).
    case outputFolderBusy = 9
    /// `template render`: the template is valid but rendering the data failed.
    case renderFailed = 10
    /// `pushline-emulator` could not start: the port is in use, or its state folder (keys,
    /// certificate) cannot be made, read or written.
    case emulatorCannotStart = 11
    /// `merge-results`: the folders are not the finished, non-overlapping shards of one campaign
    /// (another campaign or input, a shard missing or given twice, counts that do not partition).
    case shardsDoNotMatch = 12
    /// `run --resume`: no checkpoint in the folder, a finished run's, or one of another
    /// pipeline, audience, mode, shard or clock (docs/resume.md). Nothing was read or sent.
    case cannotResume = 13
    /// Bad command-line usage: an unknown flag, a value out of range, or `--data` that is not
    /// one JSON object.
    case usage = 64

    /// The name docs/exit-codes.md and `summary.json` use.
    public var name: String {
        switch self {
        case .ok: "ok"
        case .internalError: "internal_error"
        case .invalidPipeline: "invalid_pipeline"
        case .completedWithRejects: "completed_with_rejects"
        case .inputError: "input_error"
        case .outputError: "output_error"
        case .stopped: "stopped"
        case .completedWithFailures: "completed_with_failures"
        case .providerStopped: "provider_stopped"
        case .outputFolderBusy: "output_folder_busy"
        case .renderFailed: "render_failed"
        case .emulatorCannotStart: "emulator_cannot_start"
        case .shardsDoNotMatch: "shards_do_not_match"
        case .cannotResume: "cannot_resume"
        case .usage: "usage"
        }
    }

    /// What the code means, in one line: the table README.md ("Exit codes"), `pushline --help`
    /// and docs/exit-codes.md (its `Meaning` column) all say, word for word. `--help` renders
    /// `summary`; `ExitCodeTableTests` compares the other two with it. No meaning holds ", " and a
    /// digit, so the list splits back into its codes.
    public var meaning: String {
        switch self {
        case .ok: "done"
        case .internalError: "internal error (a bug)"
        case .invalidPipeline: "invalid pipeline or template (nothing read)"
        case .completedWithRejects: "finished with rejects"
        case .inputError: "the audience could not be read"
        case .outputError: "results or standard output could not be written"
        case .stopped: "stopped by SIGTERM / SIGINT"
        case .completedWithFailures: "finished with failed devices (sending)"
        case .providerStopped: "a provider stopped or could not start"
        case .outputFolderBusy: "the output folder is busy or holds an unfinished run (`--force`)"
        case .renderFailed: "`template render` failed"
        case .emulatorCannotStart: "`pushline-emulator` could not start"
        case .shardsDoNotMatch: "`merge-results` was given folders that are not one campaign's shards"
        case .cannotResume: "`--resume` found no checkpoint it can continue"
        case .usage: "bad usage"
        }
    }

    /// Every code and its meaning, in order: `0 done, 1 internal error (a bug), …, 64 bad usage`.
    public static var summary: String {
        allCases.map { "\($0.rawValue) \($0.meaning)" }.joined(separator: ", ")
    }

    public var code: Int32 { rawValue }
    public var description: String { "\(rawValue) (\(name))" }
}
