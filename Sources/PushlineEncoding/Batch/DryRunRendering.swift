public import PushlineCore

extension EncodedBatch {
    /// Renders the dry run's request lines from the index into `dryRunLines` (one writer per
    /// provider), in input order. Byte for byte the lines the encoders used to write directly:
    /// the per-device parts come from the arena, everything else from the route's framing.
    public mutating func renderDryRunLines(routes: RouteTable) {
        DryRunRenderer(routes: routes).render(&self)
    }
}

/// Renders dry-run lines from a batch's request index, compiled once per campaign: the routes'
/// framing flattened into one byte pool and plain integers, so the loop over the entries
/// touches no reference-counted value.
///
/// `render` renders the entries added since its last call (the encode worker calls it once the
/// batch is encoded).
public struct DryRunRenderer: Sendable {
    let table: DryRunFramingTable

    public init(routes: RouteTable) {
        table = DryRunFramingTable(routes)
    }

    public func render(_ batch: inout EncodedBatch) {
        let start = batch.renderedEntries
        let end = batch.index.count
        guard start < end else { return }
        var lines = batch.dryRunLines
        batch.dryRunLines = []   // so the writers are uniquely referenced while they grow
        // Reserve once: each provider's share of the arena plus its framing (about 190 bytes a line).
        let share = batch.index.arena.count / max(1, end - start)
        for provider in Provider.allCases where batch.requestTally[provider.ordinal] > 0 {
            let n = batch.requestTally[provider.ordinal]
            lines[provider.ordinal].reserveCapacity(lines[provider.ordinal].count + (share + 192) * n)
        }
        batch.index.withArena { arena in
            table.pool.withUnsafeBytes { pool in
                batch.index.entries.withUnsafeBufferPointer { entries in
                    for entry in entries[start..<end] where entry.route.index < table.routes.count {
                        let route = table.routes[entry.route.index]
                        DryRunLine.render(entry, arena: arena, framing: route, pool: pool, into: &lines[route.provider])
                    }
                }
            }
        }
        batch.dryRunLines = lines
        batch.renderedEntries = end
    }
}

/// Every route's dry-run framing in one byte pool, addressed by integers.
struct DryRunFramingTable: Sendable {
    struct Route: Sendable {
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

    /// A Web Push request encrypted by `--dry-run-encrypt`: the `authorization` and
    /// `content-length` a sending run sends, and the exact body in base64url (it is binary).
    /// A subscription whose keys could not be encrypted for shows `"body":null` and why.
    @inline(never)
    static func renderSealed(_ entry: RequestEntry, body: UnsafeRawBufferPointer, authorization: UnsafeRawBufferPointer?, headersHaveMembers: Bool, into w: inout JSONWriter) {
        guard entry.flags.contains(.sealed) else {
            w.appendRaw(#"},"body":null,"not_encrypted":"invalid_subscription_key""#)
            return
        }
        var needsComma = headersHaveMembers
        if let authorization {
            w.appendRaw(needsComma ? #","authorization":"# : #""authorization":"#)
            w.resetSeparator()
            w.writeString(utf8: authorization)
            needsComma = true
        }
        w.appendRaw(needsComma ? #","content-length":"# : #""content-length":"#)
        w.resetSeparator()
        w.writeString(String(body.count))
        w.appendRaw(#"},"body":""#)
        let encoded = Base64URL.encode(body)
        encoded.withUnsafeBytes { w.appendRaw($0) }
        w.appendRaw(#"","body_encoding":"base64url""#)
    }

    // The line's fixed pieces, named once: the reservations' bounds are summed from the same
    // constants that are written, so the two cannot drift apart.
    private static let recipientKey: StaticString = #"{"recipient":"#
    private static let lineKey: StaticString = #","line":"#
    private static let deviceKey: StaticString = #","device":"#
    private static let bodyKey: StaticString = #"},"body":"#
    private static let truncatedMember: StaticString = #","truncated":true"#
    private static let lineEnd: StaticString = "}\n"
    /// What the head's reservation holds besides its variable pieces: its three keys.
    private static let framingKeysBytes = recipientKey.utf8CodeUnitCount + lineKey.utf8CodeUnitCount + deviceKey.utf8CodeUnitCount
    /// What the tail's reservation holds besides the body.
    private static let bodyFramingBytes = bodyKey.utf8CodeUnitCount + truncatedMember.utf8CodeUnitCount + lineEnd.utf8CodeUnitCount

    static func render(_ entry: RequestEntry, arena: UnsafeRawBufferPointer, framing: DryRunFramingTable.Route, pool: UnsafeRawBufferPointer, into w: inout JSONWriter) {
        func slice(_ range: ByteRange) -> UnsafeRawBufferPointer {
            range.end <= arena.count ? UnsafeRawBufferPointer(rebasing: arena[range.range]) : UnsafeRawBufferPointer(start: nil, count: 0)
        }
        var platformText: UnsafeRawBufferPointer?
        var targetText: UnsafeRawBufferPointer?
        var authorization: UnsafeRawBufferPointer?
        var hasHeaders = false
        if !entry.headers.isEmpty {
            RequestHeaderBlock.forEach(in: arena, block: entry.headers) { id, value in
                switch id {
                case .dryRunPlatformText: platformText = value
                case .dryRunTargetText: targetText = value
                case .apnsCollapseID: hasHeaders = true
                case .dryRunAuthorization: authorization = value
                default: break
                }
            }
        }
        let recipient = slice(entry.recipient)
        // The framing up to the headers' members in one reservation: keys as raw static bytes
        // (a string literal would pick `writeKey(String)`, which escapes the key on every line:
        // measured, a third of the rendering's cost), and pieces through the reservation's
        // cursor, not one `appendRaw` each.
        let target = framing.targetInURL ? (targetText ?? slice(entry.target)) : UnsafeRawBufferPointer(start: nil, count: 0)
        let decimals = 2 * JSONWriter.ReservedBytes.maximumDecimalLength
        let head = framingKeysBytes + decimals + recipient.count + framing.before.count + (platformText?.count ?? 0) + target.count + framing.after.count
        w.appendReserved(atMost: head) { out in
            out.append(recipientKey)
            out.append(recipient)
            out.append(lineKey)
            out.appendDecimal(entry.line)
            out.append(deviceKey)
            out.appendDecimal(Int(entry.device))
            if let platformText {
                out.append(UnsafeRawBufferPointer(rebasing: pool[framing.before.lowerBound..<framing.platformText.lowerBound]))
                out.append(platformText)
                out.append(UnsafeRawBufferPointer(rebasing: pool[framing.platformText.upperBound..<framing.before.upperBound]))
            } else {
                out.append(UnsafeRawBufferPointer(rebasing: pool[framing.before]))
            }
            if framing.targetInURL {
                out.append(target)
                out.append(UnsafeRawBufferPointer(rebasing: pool[framing.after]))
            }
        }
        w.resetSeparator()
        if hasHeaders {
            var needsComma = framing.headersHaveMembers
            RequestHeaderBlock.forEach(in: arena, block: entry.headers) { id, value in
                guard id == .apnsCollapseID else { return }
                w.appendRaw(needsComma ? #","apns-collapse-id":"# : #""apns-collapse-id":"#)
                w.resetSeparator()
                w.writeString(utf8: value)
                needsComma = true
            }
        }
        if entry.flags.contains(.sealed) || entry.flags.contains(.unsealed) {
            renderSealed(entry, body: slice(entry.body), authorization: authorization, headersHaveMembers: framing.headersHaveMembers || hasHeaders, into: &w)
            if entry.isTruncated { w.appendRaw(truncatedMember) }
            w.appendRaw(lineEnd)
        } else {
            let body = slice(entry.body)
            w.appendReserved(atMost: bodyFramingBytes + body.count) { out in
                out.append(bodyKey)
                out.append(body)
                if entry.isTruncated { out.append(truncatedMember) }
                out.append(lineEnd)
            }
        }
        w.resetSeparator()
    }
}
