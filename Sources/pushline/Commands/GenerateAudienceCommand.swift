import PushlineCommandLine
import ArgumentParser
import PushlineRuntime

struct GenerateAudienceCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "generate-audience",
        abstract: "Write a realistic synthetic audience (gzip when FILE ends in .gz).",
        discussion: """
        FILE is replaced only when it is absent or a regular file (never a symlink, FIFO or \
        device); the data goes to a temporary file beside it, renamed into place when complete. \
        Customers have non-ASCII names in many scripts and one to three devices across iOS (APNs, \
        some through FCM), Android, Web Push and Fire OS. With --hostile, that share of customers \
        get first names and event titles full of JSON-hostile text (quotes, backslashes, control \
        characters, U+2028, emoji sequences, template syntax) to test escaping end to end. With \
        --webpush-subscriptions, web devices take the subscriptions of that NDJSON file in turn \
        (pushline-emulator writes its own as <state-dir>/webpush-subscriptions.ndjson) instead of \
        made-up ones, so a send to the emulator can be decrypted; the rest of the audience is the \
        same as without it.
        """
    )

    /// Far above any test or benchmark, and small enough that device counts (three per
    /// customer at most) never approach Int.max.
    static let maxCount = 1_000_000_000

    @Argument(help: "Number of customers (1 to 1000000000).")
    var count: Int

    @Argument(help: "Output file (.ndjson or .ndjson.gz).")
    var file: String

    @Option(parsing: .unconditional, help: "Random seed: the same seed writes the same audience.")
    var seed: UInt64 = 42

    @Option(parsing: .unconditional, help: ArgumentHelp("Share of customers (0 to 1) with hostile personalized values.", valueName: "fraction"))
    var hostile: Double = 0

    @Option(help: ArgumentHelp("Web Push subscriptions (NDJSON, at most 16 MiB and 100000 lines) for the web devices, used round-robin.", valueName: "file"))
    var webpushSubscriptions: String?

    func validate() throws {
        if file.isEmpty { throw ValidationError("FILE must not be empty") }
        if !(1...Self.maxCount).contains(count) { throw ValidationError("COUNT must be between 1 and \(Self.maxCount); got \(count)") }
        if !(0...1).contains(hostile) { throw ValidationError("--hostile must be a number between 0 and 1; got \(hostile)") }
        if webpushSubscriptions?.isEmpty == true { throw ValidationError("--webpush-subscriptions must not be empty") }
    }

    func run() throws {
        var subscriptions: [WebPushSubscriptionList.Subscription] = []
        if let webpushSubscriptions {
            do {
                subscriptions = try WebPushSubscriptionList.load(webpushSubscriptions).subscriptions
            } catch {
                Console.fail(error.description)
                throw ExitCode(.inputError)
            }
        }
        let generator = AudienceGenerator(seed: seed, hostileFraction: hostile, webPushSubscriptions: subscriptions)
        let devices: Int
        do {
            devices = try generator.write(count: count, to: file)
        } catch {
            Console.fail("\(error)")
            throw ExitCode(.outputError)
        }
        try Console.line("wrote \(count) customers with \(devices) devices to \(file)")
    }
}
