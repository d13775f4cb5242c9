import ArgumentParser

@main
struct Pushline: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pushline",
        abstract: "Personalized push campaigns: gzipped NDJSON audience in, exact provider requests out.",
        discussion: """
        A pipeline file (YAML) describes the campaign: the notification with its platform overrides,
        the personalization dialect, limits and providers. `run` streams the audience through it and
        writes the requests (dry run), rejects and a summary to the output folder.

        Exit codes of run: 0 all devices written, 3 finished with rejects, 4 the audience could not
        be read to its end (what came before was written), 5 results could not be written or did not
        reconcile, 2 the pipeline is invalid (nothing was read).
        """,
        subcommands: [
            RunCommand.self, ValidateCommand.self, RenderCommand.self,
            GenerateAudienceCommand.self, TemplateCommand.self,
        ]
    )
}
