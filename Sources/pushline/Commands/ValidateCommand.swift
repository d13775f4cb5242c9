import PushlineCommandLine
import ArgumentParser
import PushlineRuntime
import PushlineCore

struct ValidateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "validate",
        abstract: "Check a pipeline file: every problem is listed with its path, line and column.",
        discussion: """
        Reads no audience. Loads the providers' credentials (key files, service account, CA files) \
        and, when the pipeline has credentials (so `run` would send), checks that every provider its \
        routes reach can be sent to. Exits 0 when the pipeline is valid (warnings are printed), 2 \
        when it is not, 5 when standard output cannot be written (docs/exit-codes.md).
        """
    )

    @OptionGroup var options: PipelineOptions

    func run() throws {
        let loaded = try options.load()
        // What a plain `run` would do: with credentials it sends, so sending must be possible.
        var sending = "dry run only (no provider credentials)"
        if loaded.delivery.hasCredentials {
            do {
                // Each provider with its engine (docs/delivery.md, "Choosing the engine").
                let providers = DeliveryConfiguration.engines(try DeliveryConfiguration.load(pipeline: loaded), routes: loaded.campaign.routeTable)
                    .map { "\($0.provider) with \($0.engine)" }
                sending = "sends to \(providers.isEmpty ? "no provider" : providers.joined(separator: ", "))"
            } catch {
                options.reportInvalid(error, while: "to send")
                throw ExitCode(.invalidPipeline)
            }
        }
        let warnings = loaded.campaign.warnings.count
        let experiment = loaded.campaign.experiment.map { split in
            ", experiment '\(split.id)': variants \(split.variants.map(\.name).joined(separator: ", ")), \(ExperimentDescription.percent(split.control)) control"
        } ?? ""
        try Console.line("\(options.pipeline): valid (campaign '\(loaded.campaign.name)', \(loaded.campaign.dialect.rawValue), device types \(loaded.campaign.deviceTypes.map(\.rawValue).sorted().joined(separator: ", ")), \(sending)\(experiment)\(warnings > 0 ? ", \(warnings) warnings" : ""))")
    }
}

/// How `validate` shows an experiment's holdout share: `10%`, `2.5%`.
enum ExperimentDescription {
    static func percent(_ share: Double) -> String {
        let value = (share * 100_000).rounded() / 1000
        return (value == value.rounded() ? String(Int(value)) : String(value)) + "%"
    }
}
