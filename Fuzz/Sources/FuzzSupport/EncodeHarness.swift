public import PushlineEncoding
public import PushlineCore
import PushlineRuntime

/// Encoding one audience line with a compiled campaign, and what must hold afterwards whatever
/// the line and the campaign hold: every output line is strict JSON, the counts reconcile and
/// match the lines written, every request names the input line, and no header value or URL
/// carries a control character.
public enum EncodeHarness {
    /// The run clock of every fuzzed campaign (fixed: outputs are reproducible).
    public static let now = 1_800_000_000
    public static let lineNumber = 7

    /// Compiles pipeline YAML the way `pushline validate` does.
    public static func compile(_ yaml: String) -> Result<Campaign, Diagnostics> {
        do {
            let root = try PipelineLoader.parse(yaml: yaml, path: "fuzz.yaml")
            do {
                return .success(try Campaign.compile(root, now: now))
            } catch {
                return .failure(Diagnostics(list: error.diagnostics))
            }
        } catch {
            return .failure(Diagnostics(list: error.diagnostics))
        }
    }

    public struct Diagnostics: Error, CustomStringConvertible {
        public var list: [ConfigDiagnostic]
        public var description: String { list.map { "fuzz.yaml:\($0)" }.joined(separator: "\n") }
    }

    /// A campaign the harness needs (a fixture): failing to compile is a harness bug.
    public static func fixture(_ yaml: String, _ name: String) -> CampaignEncoder {
        switch compile(yaml) {
        case .success(let campaign): return CampaignEncoder(campaign: campaign)
        case .failure(let error): finding("fixture \(name) does not compile:\n\(error)")
        }
    }

    /// Encodes `line` with a fresh context and checks the result; returns the batch.
    @discardableResult
    public static func encode(_ line: [UInt8], with encoder: CampaignEncoder, what: String) -> EncodedBatch {
        var context = encoder.makeContext()
        return encode(line, with: encoder, context: &context, what: what)
    }

    @discardableResult
    public static func encode(_ line: [UInt8], with encoder: CampaignEncoder, context: inout EncodeContext, what: String) -> EncodedBatch {
        var batch = EncodedBatch(sequence: 0)
        encoder.encodeLine(buffer: line, line: AudienceLine(number: lineNumber, range: 0..<line.count), into: &batch, context: &context)
        batch.renderDryRunLines(routes: encoder.routes)
        check(batch, what: what)
        return batch
    }

    static func check(_ batch: EncodedBatch, what: String) {
        let counts = batch.counts
        FuzzSupport.check(counts.lines == 1, "\(what): \(counts.lines) lines counted for one")
        FuzzSupport.check(counts.reconciles, "\(what): counts do not reconcile: \(counts)")
        FuzzSupport.check(counts.reconcilesByArm, "\(what): an experiment's arms do not add up: \(counts)")
        FuzzSupport.check(counts.linesRejected == 0 || counts.devices == 0, "\(what): a rejected line has devices: \(counts)")
        for provider in Provider.allCases {
            let lines = checkNDJSON(batch.dryRunLines[provider.ordinal].bytes, what: "\(what) requests-\(provider.rawValue)")
            FuzzSupport.check(lines.count == counts.written[provider, default: 0],
                              "\(what): \(lines.count) \(provider.rawValue) request lines, \(counts.written[provider, default: 0]) counted")
            for line in lines { checkRequest(Array(line), provider: provider, what: what) }
        }
        // What the senders read: one index entry per written request, each body strict JSON
        // (Web Push bodies are the plaintext the sender encrypts, JSON too).
        FuzzSupport.check(batch.index.count == counts.writtenTotal,
                          "\(what): \(batch.index.count) index entries for \(counts.writtenTotal) requests written")
        for i in 0..<batch.index.count {
            let body = Array(batch.index.body(i))
            if let failure = StrictJSON.validate(body) {
                finding("\(what): request body \(i) in the index is not valid JSON (\(failure)): \(escaped(body, limit: 2000))")
            }
        }
        let rejects = checkNDJSON(batch.rejects.bytes, what: "\(what) rejects")
        FuzzSupport.check(rejects.count == counts.linesRejected + counts.rejectedTotal,
                          "\(what): \(rejects.count) reject lines for \(counts.linesRejected) lines and \(counts.rejectedTotal) devices rejected")
        FuzzSupport.check(counts.truncated <= counts.writtenTotal, "\(what): more truncated than written")
    }

    /// One request line (already known to be strict JSON): its line number, header values and
    /// URL.
    static func checkRequest(_ line: [UInt8], provider: Provider, what: String) {
        let root: JSONValue
        do {
            root = try JSONDocument(bytes: line, maxDepth: 256).root
        } catch {
            finding("\(what): Pushline's reader refuses a request line the oracle accepts: \(error): \(escaped(line))")
        }
        FuzzSupport.check(root["line"]?.int64Value == Int64(lineNumber), "\(what): request line without line \(lineNumber): \(escaped(line))")
        FuzzSupport.check(root["provider"]?.stringValue == provider.rawValue, "\(what): request in the \(provider.rawValue) file names another provider")
        if let url = root["url"] {
            FuzzSupport.check(isHeaderSafe(url, allowSpace: false), "\(what): URL holds control characters or spaces: \(escaped(line))")
            // A value from the pipeline or the record may fill a path segment, never add one.
            let text = url.stringValue ?? ""
            FuzzSupport.check(!text.contains("/../") && !text.contains("/./") && !text.hasSuffix("/.."),
                              "\(what): URL has a dot segment: \(escaped(line))")
        }
        for header in root["headers"]?.members ?? [] {
            FuzzSupport.check(isHeaderSafe(header.key, allowSpace: false), "\(what): header name not a token: \(escaped(line))")
            FuzzSupport.check(isHeaderSafe(header.value, allowSpace: true), "\(what): header \(header.key.stringValue ?? "?") holds a control character: \(escaped(line))")
        }
        // Sizes are checked on the final bytes (docs/overrides.md, "Size policy"): a written body
        // is within its provider's limit, truncated or not. (The fixtures send no VoIP pushes.)
        if let body = root["body"] {
            let limit: Int? = switch provider {
            case .apns: 4096
            case .webpush: 3993
            default: nil
            }
            if let limit {
                FuzzSupport.check(body.byteRange.count <= limit, "\(what): \(provider.rawValue) body of \(body.byteRange.count) bytes is over \(limit): \(escaped(line))")
            }
            if provider == .adm, let data = body["data"] {
                FuzzSupport.check(data.byteRange.count <= 6144, "\(what): adm data of \(data.byteRange.count) bytes is over 6144")
            }
        }
        // Badges are 0…99999 whatever the record's badge field holds (relative badges included).
        for aps in [root["body"]?["aps"], root["body"]?["message"]?["apns"]?["payload"]?["aps"]] {
            guard let badge = aps?["badge"] else { continue }
            let value = badge.int64Value
            FuzzSupport.check(value.map { (0...99_999).contains($0) } ?? false, "\(what): aps.badge out of 0…99999: \(escaped(line))")
        }
        // iOS through FCM carries APNs headers inside the body (message.apns.headers).
        for header in root["body"]?["message"]?["apns"]?["headers"]?.members ?? [] {
            FuzzSupport.check(isHeaderSafe(header.value, allowSpace: true), "\(what): message.apns.headers.\(header.key.stringValue ?? "?") holds a control character: \(escaped(line))")
        }
        for header in root["body"]?["message"]?["webpush"]?["headers"]?.members ?? [] {
            FuzzSupport.check(isHeaderSafe(header.value, allowSpace: true), "\(what): message.webpush.headers.\(header.key.stringValue ?? "?") holds a control character: \(escaped(line))")
        }
    }

    /// A string without C0 controls or DEL (header values may not hold CR, LF or NUL; URLs and
    /// header names not even a space).
    static func isHeaderSafe(_ value: JSONValue, allowSpace: Bool) -> Bool {
        guard value.kind == .string else { return value.kind == .number }
        return value.withUnescapedString { bytes in
            !bytes.contains { $0 < 0x20 || $0 == 0x7F || (!allowSpace && $0 == 0x20) }
        } ?? false
    }
}
