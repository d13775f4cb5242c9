import PushlineIO
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The one line on standard error that the progress rewrites in place (`\r`, the text, then
/// "clear to end of line"). Log lines are written through `interrupt`, which clears the line,
/// lets the log write, and draws the line again below it, so the two never mix.
public final class LiveLine: Sendable {
    private let descriptor: Int32
    /// Columns to fit in (a wrapped line cannot be rewritten by `\r`); 0: no limit.
    private let columns: Int
    private let shown = Mutex<String?>(nil)

    /// `descriptor`: standard error by default; a test passes a pipe or a pseudo-terminal.
    public init(descriptor: Int32 = 2) {
        self.descriptor = descriptor
        var size = winsize()
        columns = ioctl(descriptor, UInt(TIOCGWINSZ), &size) == 0 && size.ws_col > 1 ? Int(size.ws_col) - 1 : 0
    }

    /// Whether `descriptor` is a terminal.
    public static func isTerminal(_ descriptor: Int32 = 2) -> Bool { isatty(descriptor) == 1 }

    /// Replaces the line with `text` (cut to the terminal's width).
    public func show(_ text: String) {
        var line = text
        if columns > 0, line.count > columns { line = String(line.prefix(columns)) }
        shown.withLock { shown in
            emit("\r" + line + "\u{1B}[K")
            shown = line
        }
    }

    /// Removes the line (the run ended: the summary table comes next).
    public func clear() {
        shown.withLock { shown in
            if shown != nil { emit("\r\u{1B}[K") }
            shown = nil
        }
    }

    /// Runs `body` (which writes whole lines to standard error) with the line cleared, then draws
    /// it again.
    public func interrupt(_ body: () -> Void) {
        shown.withLock { shown in
            if shown != nil { emit("\r\u{1B}[K") }
            body()
            if let shown { emit("\r" + shown + "\u{1B}[K") }
        }
    }

    /// Standard error gone: the progress is not worth failing the run for.
    private func emit(_ text: String) {
        DescriptorOutput.writeAll(descriptor, Array(text.utf8))
    }
}
