import ArgumentParser

@main
struct Pushline: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pushline",
        abstract: "Personalized push campaigns: gzipped NDJSON audience in, exact provider requests out.",
        subcommands: []
    )
}
