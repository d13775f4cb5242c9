public import PushlineCore

extension EncodedBatch {
    /// Renders the dry run's request lines from the index into `dryRunLines` (one writer per
    /// provider), in input order. Byte for byte the lines the encoders used to write directly:
    /// the per-device parts come from the arena, everything else from the route's framing.
    public mutating func renderDryRunLines(routes: RouteTable) {
        let estimate = index.arena.count + index.count * 160
        for provider in Provider.allCases where requestTally[provider.ordinal] > 0 {
            dryRunLines[provider.ordinal].reserveCapacity(dryRunLines[provider.ordinal].count + estimate)
        }
        var lines = dryRunLines
        dryRunLines = []   // so the writers are uniquely referenced while they grow
        index.withArena { arena in
            for entry in index.entries {
                guard let route = routes.route(entry.route) else { continue }
                DryRunLine.render(entry, arena: arena, route: route, into: &lines[route.provider.ordinal])
            }
        }
        dryRunLines = lines
    }
}

/// One dry-run request line from an index entry (format: docs/output.md).
public enum DryRunLine {
    public static func render(_ entry: RequestEntry, arena: UnsafeRawBufferPointer, route: RequestRoute, into w: inout JSONWriter) {
        func slice(_ range: ByteRange) -> UnsafeRawBufferPointer {
            range.end <= arena.count ? UnsafeRawBufferPointer(rebasing: arena[range.range]) : UnsafeRawBufferPointer(start: nil, count: 0)
        }
        let framing = route.dryRun
        w.beginObject()
        w.writeKey("recipient")
        w.writeRawValue(slice(entry.recipient))
        w.writeKey("line")
        w.writeInt(entry.line)
        w.writeKey("device")
        w.writeInt(Int(entry.device))

        var platformText: UnsafeRawBufferPointer?
        var targetText: UnsafeRawBufferPointer?
        if !entry.headers.isEmpty {
            RequestHeaderBlock.forEach(in: arena, block: entry.headers) { id, value in
                if id == .dryRunPlatformText { platformText = value }
                if id == .dryRunTargetText { targetText = value }
            }
        }
        framing.beforeTarget.withUnsafeBytes { before in
            if let platformText {
                w.appendRaw(UnsafeRawBufferPointer(rebasing: before[..<framing.platformText.lowerBound]))
                w.appendRaw(platformText)
                w.appendRaw(UnsafeRawBufferPointer(rebasing: before[framing.platformText.upperBound...]))
            } else {
                w.appendRaw(before)
            }
        }
        if framing.targetInURL {
            w.appendRaw(targetText ?? slice(entry.target))
            framing.afterTarget.withUnsafeBytes { w.appendRaw($0) }
        }
        if framing.headersHaveMembers { w.endRawValue() } else { w.resetSeparator() }
        if !entry.headers.isEmpty {
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
