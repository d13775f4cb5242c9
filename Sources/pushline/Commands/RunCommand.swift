import PushlineCommandLine
public import ArgumentParser
public import Logging
import PushlineRuntime
import PushlineIO

struct RunCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run a campaign over its audience: send it, or (--dry-run) write the requests to files.",
        discussion: """
        Validates the pipeline first, loads the providers' credentials, and reads nothing if \
        anything is wrong. With credentials in `providers:` (APNs key_file, FCM service_account) \
        the run sends to every provider its routes reach, and each of them needs credentials; \
        without any it is a dry run and says so. Writes, in the output folder: sent.ndjson, \
        invalid-tokens.ndjson, failed.ndjson, unsent.ndjson (sending) or \
        requests-<provider>.ndjson[.gz] (dry run), rejects.ndjson and summary.json.

        SIGTERM or SIGINT stops the run gracefully: it reads no more, settles every device it \
        read (sending: in-flight requests get --drain-timeout seconds to finish, then are \
        cancelled; devices not settled with their provider are listed in unsent.ndjson), writes \
        the results and summary.json (status stopped) and exits with 6 (exit codes: \
        docs/exit-codes.md). A second signal cancels \
        what is in flight at once. A folder holding a previous sending run's unfinished results \
        (killed, stopped, or out of disk) is refused unless --resume (or --auto-resume), which \
        continues that run from its checkpoint.json without notifying anyone twice \
        (docs/resume.md); --force --resend moves them into interrupted-<UTC time>/ and sends the \
        whole campaign again.

        Running a finished run's command again (the same pipeline, audience and shard into the \
        same folder: a scheduler's retry) sends nothing: with --resume, --auto-resume, or for a \
        sending run, it says the run already finished and exits with that run's code (0, 3, 4 \
        or 7). A plain dry run is written again.
        """
    )

    @OptionGroup var options: PipelineOptions

    @Flag(help: "Write the requests to files instead of sending them.")
    var dryRun = false

    @Flag(help: "With --dry-run: encrypt each Web Push body as a send would (RFC 8291, a fresh key per message) and write it in base64url, with its authorization (VAPID, when providers.webpush has a key) and content-length.")
    var dryRunEncrypt = false

    @Flag(help: "Send FCM requests with validate_only: true (FCM checks them, delivers nothing); APNs has no such mode, so APNs devices are skipped (reason validate_only). Only when sending.")
    var validateOnly = false

    @Option(help: ArgumentHelp("Output folder (default: the pipeline's `output`, else out/<name>).", valueName: "dir"))
    var output: String?

    @Option(help: ArgumentHelp("Audience file, .ndjson or .ndjson.gz, or - for standard input (default: the pipeline's `audience`).", valueName: "file"))
    var audience: String?

    static let maxWorkers = CampaignRun.workerRange.upperBound

    @Option(parsing: .unconditional, help: "Encode workers, 1 to 256 (default: one per core).")
    var workers: Int?

    static let drainTimeoutRange = 0...3600

    @Option(parsing: .unconditional, help: ArgumentHelp("Seconds in-flight requests may take to finish after SIGTERM / SIGINT before they are cancelled, 0 to 3600.", valueName: "seconds"))
    var drainTimeout = 30

    @Option(help: ArgumentHelp("Sending: how the reader, the writer and the encode workers give way to the transfer threads: idle (Linux's SCHED_IDLE: they use cores no other thread of the process's group wants), nice (5 below the process), or normal (no change).", valueName: "idle|nice|normal"))
    var backgroundPriority: ThreadPriority.Background = .idle

    @Flag(help: "Move a previous run's unfinished results in the output folder into interrupted-<UTC time>/ (a finished sending run's, of the same campaign, into finished-<UTC time>/) and start anew. Over a sending run's results it needs --resend too.")
    var force = false

    @Flag(help: "With --force: acknowledge that the campaign is sent again to devices the folder's sending run already notified.")
    var resend = false

    @Option(help: "Log level: trace, debug, info, notice, warning, error, critical.")
    var logLevel: Logger.Level = .info

    @OptionGroup(title: "Shards") var shardOptions: ShardOptions

    @OptionGroup(title: "Checkpoint and resume") var resumeOptions: ResumeOptions

    @OptionGroup(title: "Progress, logs and metrics") var observability: ObservabilityOptions

    func validate() throws {
        if output?.isEmpty == true { throw ValidationError("--output must not be empty") }
        if audience?.isEmpty == true { throw ValidationError("--audience must not be empty (use - for standard input)") }
        if dryRunEncrypt && !dryRun {
            throw ValidationError("--dry-run-encrypt encrypts the Web Push bodies a dry run writes: add --dry-run")
        }
        if validateOnly && dryRun {
            throw ValidationError("--validate-only asks FCM to check the requests while sending; it cannot be combined with --dry-run")
        }
        if let workers, !(1...Self.maxWorkers).contains(workers) {
            throw ValidationError("--workers must be between 1 and \(Self.maxWorkers); got \(workers)")
        }
        if resend && !force {
            throw ValidationError("--resend acknowledges what --force does to a sending run's record: give it with --force")
        }
        if (resumeOptions.resume || resumeOptions.autoResume) && force {
            throw ValidationError("--resume continues the folder's run and --force moves it aside: give one of them")
        }
        if resumeOptions.resume || resumeOptions.autoResume, audience == "-" {
            throw ValidationError("--resume reads the audience again from its start: it cannot resume from standard input")
        }
        if !Self.drainTimeoutRange.contains(drainTimeout) {
            throw ValidationError("--drain-timeout must be between \(Self.drainTimeoutRange.lowerBound) and \(Self.drainTimeoutRange.upperBound) seconds; got \(drainTimeout)")
        }
    }

    func run() async throws {
        var loaded = try options.load(warn: !(resumeOptions.resume || resumeOptions.autoResume) || options.now != nil)
        let resuming = resumeOptions.resumes(folder: output ?? loaded.outputPath)
        if resuming {
            // A resume compiles the campaign with the checkpoint's clock, so expiries and quiet
            // hours come out as they did in the run it continues.
            let journal: CheckpointJournal
            do {
                journal = try ResumePoint.peek(folder: output ?? loaded.outputPath, allowingFinished: true)
            } catch {
                Console.fail(error.description)
                throw ExitCode(.cannotResume)
            }
            // A finished run is reported by the run itself, whatever the clock (nothing is compiled
            // for it to run).
            if journal.complete {
            } else if let now = options.now, now != journal.clock {
                Console.fail("cannot resume: --now \(now) differs from the checkpoint's clock \(journal.clock); leave out --now to resume")
                throw ExitCode(.cannotResume)
            }
            if options.now == nil, !journal.complete { loaded = try options.load(now: journal.clock) }
        } else if resumeOptions.autoResume, options.now == nil {
            // Starting anew: the warnings the first load kept quiet.
            loaded = try options.load()
        }
        let decision: RunDecision
        do {
            decision = try RunDecision(pipeline: loaded, dryRun: dryRun, validateOnly: validateOnly)
        } catch {
            if let invalid = error.pipelineError {
                options.reportInvalid(invalid, while: "to send")
                throw ExitCode(.invalidPipeline)
            }
            Console.fail(error.description)
            throw ExitCode(.usage)
        }
        decision.apply(to: &loaded)
        let shard = try shardOptions.resolved()
        loaded.campaign.shard = shard
        guard let audiencePath = audience ?? loaded.audiencePath else {
            Console.fail("\(options.pipeline): no audience: set `audience:` in the pipeline or pass --audience")
            throw ExitCode(.invalidPipeline)
        }
        let settings = observability.settings
        let liveLine = settings.drawsLiveLine(terminal: LiveLine.isTerminal()) ? LiveLine() : nil
        observability.bootstrapLogging(level: logLevel, liveLine: liveLine)
        let logger = Logger(label: "pushline")
        if let notice = decision.notice { logger.notice("\(notice)") }
        for line in decision.describeProviders(routes: loaded.campaign.routeTable, shard: shard) { logger.info("\(line)") }
        var run = CampaignRun(
            pipeline: loaded, audiencePath: audiencePath, outputFolder: output ?? loaded.outputPath,
            workers: workers, mode: shard.map { decision.mode.sharded($0) } ?? decision.mode, logger: logger
        )
        run.moveUnfinishedRunAside = force
        run.resendAcknowledged = resend
        run.autoResume = resumeOptions.autoResume
        resumeOptions.apply(to: &run, resuming: resuming)
        run.drainTimeout = .seconds(drainTimeout)
        run.backgroundPriority = backgroundPriority
        run.dryRunEncryptsWebPush = dryRunEncrypt
        let observation = RunObservation(
            settings: settings, audiencePath: audiencePath, sending: { if case .send = decision.mode { true } else { false } }(), liveLine: liveLine, logger: logger
        )
        run.observer = observation.observer
        let report = await observation.observe { [run] in await run.runStoppable() }
        // On standard error, before the one error line (if any) that stays last; with JSON logs,
        // as one log event, so every line but that error is JSON.
        if SummaryTable.applies(to: report), !report.repeatOfFinishedRun {
            let table = SummaryTable.render(report)
            switch observability.logFormat {
            case .text: for line in table { Console.error(line) }
            case .json: logger.notice("run summary", metadata: ["table": .array(table.map { .string($0) })])
            }
        }
        if let failure = report.failure {
            Console.fail(failure)
        } else if let error = report.source.error {
            Console.fail("the audience could not be read: \(error.description) (the lines before the error were processed and written)")
        }
        if report.exit != .ok { throw ExitCode(report.exit) }
    }
}

extension Logger.Level: @retroactive ExpressibleByArgument {}
extension ThreadPriority.Background: ExpressibleByArgument {}
