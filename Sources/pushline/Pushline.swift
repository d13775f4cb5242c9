import ArgumentParser
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
        A pipeline file (YAML) describes the campaign: the notification with its platform overrides,
        the personalization dialect, limits and providers. `run` streams the audience through it and
        writes the requests (dry run), rejects and a summary to the output folder.

        Exit codes: 0 done (run: all devices written), 2 the pipeline (or a template) is invalid and
        nothing was read, 3 run finished with rejects (template render: the render failed), 4 the
        audience could not be read to its end (what came before was written), 5 results or standard
        output could not be written, the counts did not reconcile, or the output folder holds an
        unfinished run's results (pass --force), 6 run stopped by SIGTERM / SIGINT (results and
        summary written), 64 bad command-line usage.
        Every failure prints one line starting with `pushline: error:`.
        """,
        subcommands: [
            RunCommand.self, ValidateCommand.self, RenderCommand.self,
            GenerateAudienceCommand.self, TemplateCommand.self,
        ]
    )

    /// Parses and runs a command, and turns every way it can fail into one `pushline: error:`
    /// line and an exit code (ArgumentParser's own `main` writes help with `print`, whose errors
    /// are lost, and prints usage blocks for errors).
    static func main() async {
        // A closed pipe must be an EPIPE error we report, not a silent kill.
        signal(SIGPIPE, SIG_IGN)
        do {
            var command = try parseAsRoot()
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            fail(with: error)
        }
        terminate(0)
    }

    private static func fail(with error: any Error) -> Never {
        if let error = error as? Console.OutputError {
            Console.fail(error.description)
            terminate(Console.outputFailureExitCode)
        }
        if let code = error as? ExitCode {
            // The command printed its own message.
            terminate(code.rawValue)
        }
        let code = exitCode(for: error)
        if code == .success {
            // --help, --version: their text goes to standard output, and must get there.
            do throws(Console.OutputError) {
                try Console.line(fullMessage(for: error))
            } catch {
                Console.fail(error.description)
                terminate(Console.outputFailureExitCode)
            }
            terminate(0)
        }
        let message = message(for: error).split(separator: "\n").first.map(String.init) ?? "\(error)"
        Console.fail(message + (code == .validationFailure ? " (see --help)" : ""))
        terminate(code.rawValue)
    }

}

private func terminate(_ code: Int32) -> Never {
    exit(code)
}
