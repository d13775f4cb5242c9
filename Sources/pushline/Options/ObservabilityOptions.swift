public import ArgumentParser
import Logging
import PushlineRuntime

/// `run`'s progress, log and metrics options (docs/observability.md).
struct ObservabilityOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Progress on standard error: auto (a live line on a terminal, else a log line every --progress-interval), always (the live line even without a terminal), never.", valueName: "mode"))
    var progress: ObservationSettings.Progress = .auto

    @Flag(help: "No progress (the same as --progress never).")
    var noProgress = false

    static let intervalRange = 0.1...3600.0

    @Option(parsing: .unconditional, help: ArgumentHelp("Seconds between progress log lines when standard error is not a terminal, 0.1 to 3600.", valueName: "seconds"))
    var progressInterval = 10.0

    @Option(help: ArgumentHelp("Log lines as text or json (one JSON object per line: timestamp, level, label, message, metadata).", valueName: "format"))
    var logFormat: LogFormat = .text

    @Option(help: ArgumentHelp("Write Prometheus metrics to this file (for node_exporter's textfile collector), replaced atomically every --metrics-interval seconds and at the end.", valueName: "file"))
    var metricsFile: String?

    @Option(parsing: .unconditional, help: ArgumentHelp("Seconds between rewrites of --metrics-file, 0.1 to 3600.", valueName: "seconds"))
    var metricsInterval = 5.0

    func validate() throws {
        if !Self.intervalRange.contains(progressInterval) {
            throw ValidationError("--progress-interval must be between 0.1 and 3600 seconds; got \(progressInterval)")
        }
        if !Self.intervalRange.contains(metricsInterval) {
            throw ValidationError("--metrics-interval must be between 0.1 and 3600 seconds; got \(metricsInterval)")
        }
        if metricsFile?.isEmpty == true { throw ValidationError("--metrics-file must not be empty") }
        if noProgress && progress == .always { throw ValidationError("--no-progress contradicts --progress always") }
    }

    var settings: ObservationSettings {
        var settings = ObservationSettings()
        settings.progress = noProgress ? .never : progress
        settings.logInterval = .milliseconds(Int64((progressInterval * 1000).rounded()))
        settings.metricsFile = metricsFile
        settings.metricsInterval = .milliseconds(Int64((metricsInterval * 1000).rounded()))
        return settings
    }

    /// Sets up swift-log for the process: `--log-format`, `--log-level`, and, when the live line
    /// is drawn, log lines written above it.
    func bootstrapLogging(level: Logger.Level, liveLine: LiveLine?) {
        let format = logFormat
        LoggingSystem.bootstrap { label in
            var handler: any LogHandler
            switch format {
            case .text: handler = StreamLogHandler.standardError(label: label)
            case .json: handler = JSONLogHandler(label: label)
            }
            handler.logLevel = level
            if let liveLine { handler = LiveLineLogHandler(base: handler, line: liveLine) }
            return handler
        }
    }
}

extension ObservationSettings.Progress: ExpressibleByArgument {}
extension LogFormat: ExpressibleByArgument {}
