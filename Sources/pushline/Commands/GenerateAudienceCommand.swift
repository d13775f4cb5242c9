import ArgumentParser
import PushlineRuntime

struct GenerateAudienceCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "generate-audience",
        abstract: "Write a realistic synthetic audience (gzip when FILE ends in .gz).",
        discussion: """
        Customers have non-ASCII names in many scripts and one to three devices across iOS (APNs,
        some through FCM), Android, Web Push and Fire OS. With --hostile, that share of customers
        get first names and event titles full of JSON-hostile text (quotes, backslashes, control
        characters, U+2028, emoji sequences, template syntax) to test escaping end to end.
        """
    )

    @Argument(help: "Number of customers.")
    var count: Int

    @Argument(help: "Output file (.ndjson or .ndjson.gz).")
    var file: String

    @Option(help: "Random seed: the same seed writes the same audience.")
    var seed: UInt64 = 42

    @Option(help: ArgumentHelp("Share of customers (0 to 1) with hostile personalized values.", valueName: "fraction"))
    var hostile: Double = 0

    func validate() throws {
        if count < 1 { throw ValidationError("COUNT must be at least 1") }
        if !(0...1).contains(hostile) { throw ValidationError("--hostile must be between 0 and 1") }
    }

    func run() throws {
        let generator = AudienceGenerator(seed: seed, hostileFraction: hostile)
        let devices = try generator.write(count: count, to: file)
        print("wrote \(count) customers with \(devices) devices to \(file)")
    }
}
