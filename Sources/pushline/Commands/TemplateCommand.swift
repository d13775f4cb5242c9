import ArgumentParser

struct TemplateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "template",
        abstract: "Try templates outside a campaign.",
        subcommands: [TemplateRenderCommand.self]
    )
}
