public import PushlineCore

extension EncodedBatch {
    /// Renders the dry run's request lines from the index into `dryRunLines` (one writer per
    /// provider), in input order. Byte for byte the lines the encoders used to write directly:
    /// the per-device parts come from the arena, everything else from the route's framing.
    public mutating func renderDryRunLines(routes: RouteTable) {
        // Reserve once: each provider's share of the arena plus its framing (about 160 bytes a line).
        let total = max(1, index.count)
        for provider in Provider.allCases where requestTally[provider.ordinal] > 0 {
            let n = requestTally[provider.ordinal]
            let estimate = index.arena.count / total * n + 192 * n
            dryRunLines[provider.ordinal].reserveCapacity(dryRunLines[provider.ordinal].count + estimate)
        }
        // The routes' framing flattened into one byte pool and plain integers, so the loop over
        // the entries touches no reference-counted value.
        let table = DryRunFramingTable(routes)
        var lines = dryRunLines
        dryRunLines = []   // so the writers are uniquely referenced while they grow
        index.withArena { arena in
            table.pool.withUnsafeBytes { pool in
                for entry in index.entries where entry.route.index < table.routes.count {
                    let route = table.routes[entry.route.index]
                    DryRunLine.render(entry, arena: arena, framing: route, pool: pool, into: &lines[route.provider])
                }
            }
        }
        dryRunLines = lines
    }
}

/// Every route's dry-run framing in one byte pool, addressed by integers.
struct DryRunFramingTable {
    struct Route {
        var provider: Int
        var before: Range<Int>
        var platformText: Range<Int>
        var after: Range<Int>
        var targetInURL: Bool
        var headersHaveMembers: Bool
    }

    var pool: [UInt8] = []
    var routes: [Route] = []

    init(_ table: RouteTable) {
        for route in table.routes {
            let framing = route.dryRun
            let before = pool.count..<(pool.count + framing.beforeTarget.count)
            pool += framing.beforeTarget
            let after = pool.count..<(pool.count + framing.afterTarget.count)
            pool += framing.afterTarget
            let platform = (before.lowerBound + framing.platformText.lowerBound)..<(before.lowerBound + framing.platformText.upperBound)
            routes.append(Route(
                provider: route.provider.ordinal, before: before, platformText: platform, after: after,
                targetInURL: framing.targetInURL, headersHaveMembers: framing.headersHaveMembers
            ))
        }
    }
}

/// One dry-run request line from an index entry (format: docs/output.md).
public enum DryRunLine {
    /// Renders the line of `entry` on `route` (for tools and tests; a batch renders through
    /// `EncodedBatch.renderDryRunLines`).
    public static func render(_ entry: RequestEntry, arena: UnsafeRawBufferPointer, route: RequestRoute, into w: inout JSONWriter) {
        var table = RouteTable()
        var copy = route
        copy.id = RouteID(0)
        table.add(copy)
        let framing = DryRunFramingTable(table)
        framing.pool.withUnsafeBytes { pool in
            render(entry, arena: arena, framing: framing.routes[0], pool: pool, into: &w)
        }
    }

    static func render(_ entry: RequestEntry, arena: UnsafeRawBufferPointer, framing: DryRunFramingTable.Route, pool: UnsafeRawBufferPointer, into w: inout JSONWriter) {
        func slice(_ range: ByteRange) -> UnsafeRawBufferPointer {
            range.end <= arena.count ? UnsafeRawBufferPointer(rebasing: arena[range.range]) : UnsafeRawBufferPointer(start: nil, count: 0)
        }
        w.beginObject()
        w.writeKey("recipient")
        w.writeRawValue(slice(entry.recipient))
        w.writeKey("line")
        w.writeInt(entry.line)
        w.writeKey("device")
        w.writeInt(Int(entry.device))

        var platformText: UnsafeRawBufferPointer?
        var targetText: UnsafeRawBufferPointer?
        var hasHeaders = false
        if !entry.headers.isEmpty {
            RequestHeaderBlock.forEach(in: arena, block: entry.headers) { id, value in
                switch id {
                case .dryRunPlatformText: platformText = value
                case .dryRunTargetText: targetText = value
                case .apnsCollapseID: hasHeaders = true
                default: break
                }
            }
        }
        if let platformText {
            w.appendRaw(UnsafeRawBufferPointer(rebasing: pool[framing.before.lowerBound..<framing.platformText.lowerBound]))
            w.appendRaw(platformText)
            w.appendRaw(UnsafeRawBufferPointer(rebasing: pool[framing.platformText.upperBound..<framing.before.upperBound]))
        } else {
            w.appendRaw(UnsafeRawBufferPointer(rebasing: pool[framing.before]))
        }
        if framing.targetInURL {
            w.appendRaw(targetText ?? slice(entry.target))
            w.appendRaw(UnsafeRawBufferPointer(rebasing: pool[framing.after]))
        }
        if framing.headersHaveMembers { w.endRawValue() } else { w.resetSeparator() }
        if hasHeaders {
            RequestHeaderBlock.forEach(in: arena, block: entry.headers) { id, value in
                guard id == .apnsCollapseID else { return }
                w.writeKey("apns-collapse-id")
                w.writeString(utf8: value)
            }
        }
        w.endObject()
        w.writeKey("body")
        w.writeRawValue(slice(entry.body))
        if entry.isTruncated {
            w.writeKey("truncated")
            w.writeBool(true)
        }
        w.endObject()
        w.appendRaw(byte: 0x0A)
        w.resetSeparator()
    }
}
