/// Why the transport could not be created or would not take a request.
public struct TransportError: Error, Sendable, Equatable, CustomStringConvertible {
    private enum Kind: Equatable {
        case invalidConfiguration(String)
        case trustAnchors(path: String, problem: String)
        case curlSetup(String)
        case shutDown
        case invalidRequest(String)
    }

    private let kind: Kind
    private init(_ kind: Kind) { self.kind = kind }

    static func invalidConfiguration(_ message: String) -> TransportError { TransportError(.invalidConfiguration(message)) }
    static func trustAnchors(path: String, problem: String) -> TransportError { TransportError(.trustAnchors(path: path, problem: problem)) }
    static func curlSetup(_ message: String) -> TransportError { TransportError(.curlSetup(message)) }
    static func invalidRequest(_ message: String) -> TransportError { TransportError(.invalidRequest(message)) }
    /// The transport is shutting down or shut down: the request was not taken (no completion
    /// will come for it).
    public static let shutDown = TransportError(.shutDown)

    public var isShutDown: Bool { kind == .shutDown }

    public var description: String {
        switch kind {
        case .invalidConfiguration(let message): "transport configuration: \(message)"
        case .trustAnchors(let path, let problem): "ca_file \(path): \(problem)"
        case .curlSetup(let message): "libcurl: \(message)"
        case .shutDown: "the transport is shut down and takes no more requests"
        case .invalidRequest(let message): "request: \(message)"
        }
    }
}
