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
    /// Runs the campaign in a `ServiceGroup` with a signal watcher: the first SIGTERM or SIGINT
    /// starts a graceful stop (reading stops, lines read are settled, lanes get `drainTimeout` to
    /// finish what is in flight, then the run is cancelled); a second one cancels it at once.
    /// Either way every device read gets its outcome, the results and `summary.json` are written,
    /// and the status is `stopped` (exit code 6).
    public func runStoppable(stop: RunStop = RunStop()) async -> RunReport {
        // Named here too, so a run whose service group ends before it starts still gets its final metrics.
        observer?.identify(campaign: pipeline.campaign.name, shard: pipeline.campaign.shard, arms: pipeline.campaign.experiment?.armNames)
        // Trapped before anything runs: a signal from now on is the watcher's, never a kill.
        let signals = await UnixSignalsSequence(trapping: .sigterm, .sigint)
        let service = CampaignRunService(self, stop: stop)
        let group = ServiceGroupHandle()
        let watcher = SignalWatcher(signals: signals, stop: stop, group: group)
        var configuration = ServiceGroupConfiguration(
            services: [
                // Shut down in reverse order: the run drains first while the watcher still listens.
                .init(service: watcher),
                .init(service: service, successTerminationBehavior: .gracefullyShutdownGroup),
            ],
            logger: Logger(label: "pushline.lifecycle", factory: { _ in logger.handler })
        )
        configuration.maximumGracefulShutdownDuration = drainTimeout
        let serviceGroup = ServiceGroup(configuration: configuration)
        group.set(serviceGroup)
        do {
            try await serviceGroup.run()
        } catch {
            logger.error("the run's service group failed", metadata: ["error": "\(error)"])
        }
        if let report = service.report { return report }
        var report = RunReport(status: .failed, counts: RunCounts(), source: SourceReport(path: audiencePath), files: [], outputFolder: outputFolder, seconds: 0)
        report.failure = "the run did not start (its service group ended first)"
        return report
    }
}

/// The service group a watcher stops, set once the group exists (the group is made from its
/// services, the watcher among them).
final class ServiceGroupHandle: Sendable {
    private let group = Mutex<ServiceGroup?>(nil)

    func set(_ group: ServiceGroup) { self.group.withLock { $0 = group } }

    func triggerGracefulShutdown() async {
        await group.withLock { $0 }?.triggerGracefulShutdown()
    }
}

/// SIGTERM and SIGINT for as long as the run drains, read from the signal sequence itself: the
/// first is noted (the stop's cause names it) and starts the group's graceful shutdown, whose
/// deadline is the drain timeout; the second stops the run at once.
struct SignalWatcher: Service {
    let signals: UnixSignalsSequence
    let stop: RunStop
    let group: ServiceGroupHandle

    func run() async {
        var seen = 0
        for await signal in signals.cancelOnGracefulShutdown() {
            seen += 1
            if seen == 1 {
                stop.noteSignal("\(signal)")
                await group.triggerGracefulShutdown()
            } else {
                stop.stopNow(cause: "a second signal (\(signal))")
            }
        }
    }
}
