import ArgumentParser
import PushlineRuntime

struct ValidateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "validate",
        abstract: "Check a pipeline file: every problem is listed with its path, line and column.",
        discussion: "Reads no audience. Exits 0 when the pipeline is valid (warnings are printed), 2 when it is not, 5 when standard output cannot be written."
    )

    @OptionGroup var options: PipelineOptions

    func run() throws {
        let loaded = try options.load()
        let warnings = loaded.campaign.warnings.count
        try Console.line("\(options.pipeline): valid (campaign '\(loaded.campaign.name)', \(loaded.campaign.dialect.rawValue), device types \(loaded.campaign.deviceTypes.map(\.rawValue).sorted().joined(separator: ", "))\(warnings > 0 ? ", \(warnings) warnings" : ""))")
    }
}
