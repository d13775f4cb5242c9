public import Logging
import Foundation
import PushlineIO
import PushlineDelivery
import AsyncAlgorithms

/// How a run shows what it does (`pushline run`'s observability options).
public struct ObservationSettings: Sendable {
    public enum Progress: String, Sendable, CaseIterable {
        /// The live line on a terminal, else a log line every `logInterval`.
        case auto
        /// The live line even when standard error is not a terminal (tests, `script`).
        case always
        /// Neither.
        case never
    }

    public var progress: Progress = .auto
    /// Without a terminal: one progress log line this often.
    public var logInterval: Duration = .seconds(10)
    /// On a terminal: how often the line is redrawn.
    public var liveInterval: Duration = .milliseconds(250)
    /// A Prometheus text file, replaced every `metricsInterval` and at the end.
    public var metricsFile: String?
    public var metricsInterval: Duration = .seconds(5)

    public init() {}

    /// Whether the live line is drawn, given whether standard error is a terminal.
    public func drawsLiveLine(terminal: Bool) -> Bool {
        progress == .always || (progress == .auto && terminal)
    }
}

/// Runs a campaign with its progress and metrics: a timer child task draws the live line (or logs
/// the progress), another replaces the metrics file once the run has named itself; both read the `RunObserver` that the run's
/// stages publish to, never the stages themselves. When the run ends the line is cleared and the
/// metrics file is written once more from the final report, so its counters equal
/// `summary.json`'s.
public final class RunObservation: Sendable {
    public let observer: RunObserver
    /// The live line, when it is drawn; log handlers write through it (`LiveLineLogHandler`).
    public let liveLine: LiveLine?
    private let settings: ObservationSettings
    private let sending: Bool
    private let logger: Logger

    public init(settings: ObservationSettings, audiencePath: String, sending: Bool, liveLine: LiveLine?, logger: Logger) {
        self.settings = settings
        self.sending = sending
        self.logger = logger
        self.liveLine = liveLine
        observer = RunObserver(audiencePath: audiencePath, metrics: settings.metricsFile == nil ? nil : RunMetrics())
    }

    /// The progress as of now.
    public func progressLine() -> ProgressLine {
        let live = observer.live
        let elapsed = ContinuousClock.now - observer.started
        var line = ProgressLine(
            counts: live.counts, compressedBytesRead: observer.compressedBytesRead, audienceBytes: observer.audienceBytes,
            seconds: Self.seconds(elapsed), sending: sending
        )
        line.inLanes = live.inLanes
        line.retrying = live.retrying
        return line
    }

    /// Runs `run` (a `CampaignRun` given `observer`) with the progress and metrics tasks beside
    /// it, as child tasks that end with it.
    public func observe(_ run: @Sendable () async -> RunReport) async -> RunReport {
        let metricsWriter = settings.metricsFile.flatMap { path in observer.metrics.map { MetricsWriter(option: path, metrics: $0, logger: logger) } }
        let report = await withTaskGroup(of: Void.self, returning: RunReport.self) { group in
            if let liveLine {
                let interval = settings.liveInterval
                // Clocks, not polls: each tick draws or logs what the counts are then. They end
                // with the run (`cancelAll`).
                group.addTask { [self] in
                    liveLine.show(progressLine().text)
                    for await _ in AsyncTimerSequence(interval: interval, clock: .continuous) {
                        liveLine.show(progressLine().text)
                    }
                }
            } else if settings.progress == .auto {
                let interval = settings.logInterval
                group.addTask { [self] in
                    for await _ in AsyncTimerSequence(interval: interval, clock: .continuous) {
                        logger.info("progress", metadata: progressLine().metadata)
                    }
                }
            }
            if let metricsWriter {
                let interval = settings.metricsInterval
                group.addTask { [self] in
                    // The labels and the file's name need the campaign, which the run names first thing.
                    guard let identity = await observer.identityWhenNamed() else { return }
                    func write() async {
                        let live = observer.live
                        await metricsWriter.write(RunMetrics.Reading(
                            counts: live.counts, compressedBytesRead: observer.compressedBytesRead, audienceBytes: observer.audienceBytes,
                            lanes: await observer.laneReports(), inLanes: live.inLanes, retrying: live.retrying,
                            seconds: Self.seconds(ContinuousClock.now - observer.started)
                        ), identity: identity)
                    }
                    await write()
                    for await _ in AsyncTimerSequence(interval: interval, clock: .continuous) { await write() }
                }
            }
            let report = await run()
            group.cancelAll()
            await group.waitForAll()
            return report
        }
        liveLine?.clear()
        // From the report: the same numbers as summary.json. (A run names its campaign before
        // anything else, so only a `run` that is no `CampaignRun` leaves no identity.)
        if let metricsWriter, let identity = observer.identified {
            await metricsWriter.write(RunMetrics.Reading(
                counts: report.counts, compressedBytesRead: report.source.compressedBytes, audienceBytes: observer.audienceBytes,
                lanes: report.delivery.compactMap(\.lane), seconds: report.seconds, finished: report.exit
            ), identity: identity)
        }
        return report
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}

/// Writes the metrics file; a failure is logged once (and again once it recovers and fails anew),
/// never fails the run: its results do not depend on it.
actor MetricsWriter {
    /// `--metrics-file`: the file, or the folder it goes in (`RunMetrics.filePath`).
    let option: String
    let metrics: RunMetrics
    let logger: Logger
    private var failing = false
    /// Decided at the first write, once the run has named its campaign and shard.
    private(set) var path: String?

    init(option: String, metrics: RunMetrics, logger: Logger) {
        self.option = option
        self.metrics = metrics
        self.logger = logger
    }

    func write(_ reading: RunMetrics.Reading, identity: RunObserver.Identity) {
        let path = self.path ?? RunMetrics.filePath(option, campaign: identity.campaign, shard: identity.shard) { folder in
            var isFolder: ObjCBool = false
            return FileManager.default.fileExists(atPath: folder, isDirectory: &isFolder) && isFolder.boolValue
        }
        self.path = path
        metrics.update(reading)
        do throws(OutputFileError) {
            try metrics.write(to: path)
            failing = false
        } catch {
            if !failing { logger.warning("cannot write the metrics file", metadata: ["error": "\(error.description)"]) }
            failing = true
        }
    }
}
