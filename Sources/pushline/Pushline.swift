import ArgumentParser
import PushlineCommandLine
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

@main
struct Pushline: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pushline",
        abstract: "Personalized push campaigns: gzipped NDJSON audience in, exact provider requests out.",
        discussion: """
        A pipeline file (YAML) describes the campaign: the notification with its platform overrides, \
        the personalization dialect, limits and providers. `run` streams the audience through it and \
        writes the requests (dry run), rejects and a summary to the output folder.

        Exit codes (one cause each; docs/exit-codes.md): 0 done, 1 internal error (a bug: counts \
        did not reconcile), 2 the pipeline or a template is invalid (nothing was read), 3 run \
        finished with rejects, 4 the audience could not be read (what came before was written), \
        5 results or standard output could not be written, 6 run stopped by SIGTERM / SIGINT, \
        7 sending run finished with failed devices, 8 a provider's sender could not start or \
        stopped, 9 the output folder is in use or holds an unfinished run (pass --force), \
        10 template render failed, 12 merge-results was given folders that are not the shards of \
        one campaign, 64 bad command-line usage. \
        Every failure prints one line starting with `pushline: error:`.
        """,
        subcommands: [
            RunCommand.self, ValidateCommand.self, RenderCommand.self,
            GenerateAudienceCommand.self, TemplateCommand.self, MergeResultsCommand.self,
        ]
    )

    /// Parses and runs a command; every failure is one `pushline: error:` line and an exit code.
    static func main() async {
        await CommandMain.run(Pushline.self, program: "pushline")
    }
}

extension Console {
    /// `pushline: error: …`: the one line a command prints when it cannot do its job.
    static func fail(_ message: String) { fail(message, program: "pushline") }
}
