public import ArgumentParser
public import PushlineCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// How both executables run their root command: parse, run, and turn every way it can fail into
/// one `<program>: error:` line and an exit code. ArgumentParser's own `main` writes help with
/// `print`, whose errors are lost, and prints usage blocks for errors.
public enum CommandMain {
    public static func run<Root: ParsableCommand>(_ root: Root.Type, program: String) async -> Never {
        // A closed pipe must be an EPIPE error we report, not a silent kill.
        signal(SIGPIPE, SIG_IGN)
        do {
            var command = try root.parseAsRoot()
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            fail(root, with: error, program: program)
        }
        exit(0)
    }

    private static func fail<Root: ParsableCommand>(_ root: Root.Type, with error: any Error, program: String) -> Never {
        if let error = error as? Console.OutputError {
            Console.fail(error.description, program: program)
            exit(PushlineExit.outputError.rawValue)
        }
        // The command printed its own message.
        if let code = error as? ExitCode { exit(code.rawValue) }
        let code = root.exitCode(for: error)
        if code == .success {
            // --help, --version: their text goes to standard output, and must get there.
            do throws(Console.OutputError) {
                try Console.line(root.fullMessage(for: error))
            } catch {
                Console.fail(error.description, program: program)
                exit(PushlineExit.outputError.rawValue)
            }
            exit(0)
        }
        // ArgumentParser's only other codes: a usage error, or EXIT_FAILURE for an error no
        // command turned into its own code (a bug).
        let outcome: PushlineExit = code == .validationFailure ? .usage : .internalError
        // Whole, on one line: ArgumentParser lists some choices one a line ("…following:\n  - a\n
        // - b"), written here as "…following: a, b"; a line break in a value the user gave is
        // escaped by `Console.fail` (cutting at the first one lost the rest of the message).
        var message = root.message(for: error).replacing(":\n  - ", with: ": ").replacing("\n  - ", with: ", ")
        while message.last?.isNewline == true { message.removeLast() }
        if message.isEmpty { message = "\(error)" }
        Console.fail(message + (outcome == .usage ? " (see --help)" : ""), program: program)
        exit(outcome.rawValue)
    }
}

extension ExitCode {
    /// How a command ends with one of the documented codes: `throw ExitCode(.inputError)`.
    public init(_ exit: PushlineExit) {
        self.init(exit.rawValue)
    }
}

/// The documented exit codes, named where the executables get their command-line plumbing.
public typealias PushlineExit = PushlineCore.PushlineExit
