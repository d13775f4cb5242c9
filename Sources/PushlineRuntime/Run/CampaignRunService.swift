public import ServiceLifecycle
import UnixSignals
import Logging
import PushlineCore
import Synchronization

/// A campaign run as a swift-service-lifecycle `Service`: the service group's graceful shutdown
/// (SIGTERM / SIGINT in `runStoppable`) starts the run's drain (`RunStop.drain`), and the group's
/// `maximumGracefulShutdownDuration` (the drain timeout) escalates to task cancellation, which
/// stops the run at once (`RunStop.stopNow`: in-flight requests cancelled).
///
/// The stages run in a task of their own, not as a child of the service: cancellation must reach
/// them only as `RunStop`, never as task cancellation (a cancelled `AsyncChannel.send` drops its
/// batch, and every device read must get its outcome).
public final class CampaignRunService: Service, Sendable {
    public let campaignRun: CampaignRun
    public let stop: RunStop
    private let result = Mutex<RunReport?>(nil)

    public init(_ campaignRun: CampaignRun, stop: RunStop = RunStop()) {
        self.campaignRun = campaignRun
        self.stop = stop
    }

    /// The run's report once `run()` returned.
    public var report: RunReport? { result.withLock { $0 } }

    public func run() async {
        let campaignRun = self.campaignRun
        let stop = self.stop
        let stages = Task { await campaignRun.run(stop: stop) }
        let deadline = Int(campaignRun.drainTimeout.components.seconds)
        let report = await withTaskCancellationHandler {
            await withGracefulShutdownHandler {
                await stages.value
            } onGracefulShutdown: {
                stop.drain(cause: stop.signalNoted ?? "a graceful shutdown request")
            }
        } onCancel: {
            stop.stopNow(cause: "the drain deadline (\(deadline) s)")
        }
        result.withLock { $0 = report }
    }
}

extension CampaignRun {
    /// Runs the campaign in a `ServiceGroup` that turns SIGTERM and SIGINT into a graceful stop:
    /// reading stops, lines read are settled, lanes get `drainTimeout` to finish what is in
    /// flight, then it is cancelled; a second signal cancels it at once. Either way every device
    /// read gets its outcome, the results and `summary.json` are written, and the status is
    /// `stopped` (exit code 6).
    public func runStoppable(stop: RunStop = RunStop()) async -> RunReport {
        // Named here too, so a run whose service group ends before it starts still gets its final metrics.
        observer?.identify(campaign: pipeline.campaign.name, shard: pipeline.campaign.shard)
        let service = CampaignRunService(self, stop: stop)
        let watcher = SecondSignalWatcher(stop: stop)
        var configuration = ServiceGroupConfiguration(
            services: [
                // Shut down in reverse order: the run drains first while the watcher still listens.
                .init(service: watcher),
                .init(service: service, successTerminationBehavior: .gracefullyShutdownGroup),
            ],
            gracefulShutdownSignals: [.sigterm, .sigint],
            logger: Logger(label: "pushline.lifecycle") { _ in SignalNotingHandler(base: logger.handler, stop: stop) }
        )
        configuration.logging.keys.signalKey = SignalNotingHandler.signalKey
        configuration.maximumGracefulShutdownDuration = drainTimeout
        let group = ServiceGroup(configuration: configuration)
        do {
            try await group.run()
        } catch {
            logger.error("the run's service group failed", metadata: ["error": "\(error)"])
        }
        if let report = service.report { return report }
        var report = RunReport(status: .failed, counts: RunCounts(), source: SourceReport(path: audiencePath), files: [], outputFolder: outputFolder, seconds: 0)
        report.failure = "the run did not start (its service group ended first)"
        return report
    }
}

/// Listens for SIGTERM / SIGINT for as long as the run drains: the first is the service group's
/// (it starts the drain), the second stops the run at once.
struct SecondSignalWatcher: Service {
    let stop: RunStop

    func run() async {
        let signals = await UnixSignalsSequence(trapping: .sigterm, .sigint)
        var seen = 0
        for await signal in signals.cancelOnGracefulShutdown() {
            seen += 1
            if seen >= 2 { stop.stopNow(cause: "a second signal (\(signal))") }
        }
    }
}

/// The service group's log handler: forwards to the run's handler at its level, and notes the
/// signal the group logs (at debug level, just before it starts the graceful shutdown), so the
/// stop is logged and summarised with the signal that caused it.
struct SignalNotingHandler: LogHandler {
    static let signalKey = "signal"
    var base: any LogHandler
    let stop: RunStop

    var metadata: Logger.Metadata {
        get { base.metadata }
        set { base.metadata = newValue }
    }

    /// Debug, whatever the base's level, so the signal line always reaches `log`.
    var logLevel: Logger.Level {
        get { .debug }
        set { base.logLevel = newValue }
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { base[metadataKey: key] }
        set { base[metadataKey: key] = newValue }
    }

    func log(event: LogEvent) {
        if let signal = event.metadata?[Self.signalKey] { stop.noteSignal("\(signal)") }
        guard event.level >= base.logLevel else { return }
        base.log(event: event)
    }
}
