import Foundation
import PushlineCore
import PushlineEncoding
import Testing

/// A batch encoded from audience lines, with its dry-run lines rendered and parsed.
struct IndexedBatch {
    var batch: EncodedBatch
    var routes: RouteTable
    /// Dry-run lines in index order (each entry's line, found in its provider's file).
    var lines: [(bytes: [UInt8], object: [String: Any])]

    init(_ campaign: Campaign, lines audience: [String]) throws {
        let encoder = CampaignEncoder(campaign: campaign)
        var context = encoder.makeContext()
        var batch = EncodedBatch(sequence: 0)
        var buffer: [UInt8] = []
        for (i, line) in audience.enumerated() {
            let start = buffer.count
            buffer += Array(line.utf8)
            encoder.encodeLine(buffer: buffer, line: AudienceLine(number: i + 1, range: start..<buffer.count), into: &batch, context: &context)
            buffer.append(0x0A)
        }
        batch.renderDryRunLines(routes: campaign.routeTable)
        routes = campaign.routeTable
        // Each provider's file holds its entries in index order: walk them side by side.
        var perProvider = batch.dryRunLines.map { $0.bytes.split(separator: 0x0A).map(Array.init) }
        var parsed: [(bytes: [UInt8], object: [String: Any])] = []
        for entry in batch.index.entries {
            let provider = routes[entry.route].provider.ordinal
            let bytes = try #require(perProvider[provider].first, "a line for every entry")
            perProvider[provider].removeFirst()
            let object = try JSONSerialization.jsonObject(with: Data(bytes))
            parsed.append((bytes, try #require(object as? [String: Any])))
        }
        let leftover = perProvider.reduce(0) { $0 + $1.count }
        #expect(leftover == 0, "no line without an entry")
        self.batch = batch
        lines = parsed
    }

    var index: RequestIndex { batch.index }

    func text(_ range: ByteRange) -> String {
        String(decoding: index.bytes(range), as: UTF8.self)
    }

    /// The URL a sender builds from the route and the target.
    func url(_ i: Int) -> String {
        let entry = index[i]
        let url = routes[entry.route].url
        switch url.shape {
        case .fixed: return url.origin + url.pathBeforeTarget
        case .targetInPath: return url.origin + url.pathBeforeTarget + text(entry.target) + url.pathAfterTarget
        case .target: return text(entry.target)
        }
    }

    /// The HTTP headers a sender sends (without credentials): constant, then per request.
    func headers(_ i: Int) -> [String: String] {
        var headers: [String: String] = [:]
        for field in routes[index[i].route].constantHeaders { headers[field.name] = field.value }
        index.forEachHeader(i) { id, value in
            if let name = id.httpName { headers[name] = String(decoding: value, as: UTF8.self) }
        }
        return headers
    }

    func headerItem(_ i: Int, _ id: RequestHeaderID) -> String? {
        index.withArena { arena in
            RequestHeaderBlock.value(id, in: arena, block: index[i].headers).map { String(decoding: $0, as: UTF8.self) }
        }
    }

    /// The body bytes parse as JSON, equal the dry-run line's body, and stand in the line as is.
    func checkBody(_ i: Int, sourceLocation: SourceLocation = #_sourceLocation) throws -> [String: Any] {
        let body = Array(index.body(i))
        let parsed = try #require(try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any], sourceLocation: sourceLocation)
        #expect(jsonEqual(parsed, lines[i].object["body"]), "entry \(i)", sourceLocation: sourceLocation)
        let marker = Array(#","body":"#.utf8) + body
        #expect(lines[i].bytes.firstRange(of: marker) != nil, "entry \(i): the body's bytes stand in the line", sourceLocation: sourceLocation)
        return parsed
    }
}
