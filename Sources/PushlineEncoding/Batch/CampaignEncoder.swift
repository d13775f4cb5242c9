public import PushlineCore
import PushlineTemplates

/// Parses, routes and encodes audience lines for one compiled campaign into a batch's request
/// index. Pure: no I/O, no shared state, so the runtime runs one per worker over whole batches.
public struct CampaignEncoder: Sendable {
    public let campaign: Campaign
    /// Nesting bound for audience lines (a deeper line is a reject, never a stack overflow).
    public var maxJSONDepth = 64

    /// Each route's compiled body, by `RouteID` (the same ids as `campaign.routeTable`).
    let programs: [RouteProgram]
    /// `campaign.deviceTypes` as bits, for the router: a device of another type is skipped
    /// before its token is read.
    let targets: PlatformSet

    /// A route's plan with its body compiled into a `PayloadProgram`. Each case holds one class
    /// reference, so choosing a device's route retains one reference, not every field of the
    /// plan (measured: copying the plans was a few percent of a dry run's CPU).
    enum RouteProgram: Sendable {
        case apns(Compiled<APNsPlan>)
        case fcm(Compiled<FCMPlan>)
        case webPush(Compiled<WebPushPlan>)
        case adm(Compiled<ADMPlan>)
        case webhook(Compiled<WebhookPlan>)
    }

    final class Compiled<Plan: Sendable>: Sendable {
        let plan: Plan
        let body: PayloadProgram
        /// FCM: what opens the body before the message.
        let bodyPrefix: [UInt8]
        init(_ plan: Plan, _ body: PayloadProgram, bodyPrefix: [UInt8] = []) {
            self.plan = plan
            self.body = body
            self.bodyPrefix = bodyPrefix
        }
    }

    public init(campaign: Campaign) {
        self.campaign = campaign
        targets = PlatformSet(campaign.deviceTypes)
        programs = campaign.routes.table.routes.map { route in
            switch campaign.routes.plan(route.id) {
            case .apns(let plan): .apns(Compiled(plan, PayloadProgram(plan.payload)))
            case .fcm(let plan): .fcm(Compiled(plan, PayloadProgram(members: plan.message), bodyPrefix: campaign.fcmValidateOnly ? FCMEncoder.validateOnlyPrefix : FCMEncoder.messagePrefix))
            case .webPush(let plan): .webPush(Compiled(plan, PayloadProgram(plan.notification)))
            case .adm(let plan): .adm(Compiled(plan, PayloadProgram(plan.data)))
            case .webhook(let plan): .webhook(Compiled(plan, PayloadProgram(members: [])))
            }
        }
    }

    /// An encoder for another worker: the same campaign with routes compiled again, so workers
    /// share no reference-counted object on the hot path (`Campaign.recompiled`); this
    /// encoder itself when that is not possible.
    public func forAnotherWorker() -> CampaignEncoder {
        guard let fresh = campaign.recompiled() else { return self }
        var copy = campaign
        copy.routes = fresh.routes
        // The split is read for every line: each worker counts references on its own.
        copy.experiment = fresh.experiment
        var encoder = CampaignEncoder(campaign: copy)
        encoder.maxJSONDepth = maxJSONDepth
        return encoder
    }

    /// The campaign's routes, for sinks and senders.
    public var routes: RouteTable { campaign.routes.table }

    /// Counts and rejects a line the reader found longer than `limits.max_line_bytes` (it never
    /// held the line's bytes).
    public func rejectOversizeLine(_ number: Int, length: Int, into batch: inout EncodedBatch) {
        batch.baseCounts.lines += 1
        rejectLine(number, id: nil, .lineTooLong(length, limit: campaign.maxLineBytes), into: &batch)
    }

    /// Per-worker state for `encodeLine`: create one per worker and reuse it for every line, so
    /// its scratch buffers and render cache keep their capacity.
    public func makeContext() -> EncodeContext {
        EncodeContext(record: Self.emptyRecord, fieldLimit: campaign.maxFieldBytes, templateSlots: campaign.templateSlots)
    }

    private static let emptyRecord: JSONValue = {
        do { return try JSONDocument(bytes: Array("{}".utf8)).root } catch { preconditionFailure("\(error)") }
    }()

    public func encodeLine(buffer: [UInt8], line: AudienceLine, into batch: inout EncodedBatch) {
        var context = makeContext()
        encodeLine(buffer: buffer, line: line, into: &batch, context: &context)
    }

    public func encodeLine(buffer: [UInt8], line: AudienceLine, into batch: inout EncodedBatch, context: inout EncodeContext) {
        batch.baseCounts.lines += 1
        if batch.firstLine == 0 || line.number < batch.firstLine { batch.firstLine = line.number }
        batch.lastLine = max(batch.lastLine, line.number)
        context.endLine()
        let document: JSONDocument
        do {
            document = try JSONDocument(buffer: buffer, range: line.range, maxDepth: maxJSONDepth, reusing: &context.tapeStorage)
        } catch {
            if let shard = campaign.shard, !shard.owns(lineWithoutID: line.number) { return batch.baseCounts.linesOtherShard += 1 }
            return rejectLine(line.number, id: nil, .invalidJSON(error), into: &batch)
        }
        let record: AudienceRecord
        switch AudienceRouter.route(document.root, into: &context.routeStorage, targeting: targets) {
        case .failure(let reason):
            if let shard = campaign.shard, !shard.owns(lineWithoutID: line.number) { return batch.baseCounts.linesOtherShard += 1 }
            return rejectLine(line.number, id: document.root.member("id"), reason, into: &batch)
        case .success(let id):
            // Shares the context's array (no copy): the next line's `endLine` finds it unshared.
            record = AudienceRecord(root: document.root, id: id, routes: context.routeStorage)
        }
        if let shard = campaign.shard, !shard.owns(recipient: record.id) {
            skipDevices(of: record, .otherShard(shard), into: &batch)
            return batch.baseCounts.linesOtherShard += 1
        }
        // The experiment's arm, before anything else is decided about the recipient's devices:
        // a control recipient appears in no other result file.
        var arm: Int?
        if let experiment = campaign.experiment {
            switch experiment.arm(recipient: record.id) {
            case .control:
                batch.baseCounts.countRecipient(arm: experiment.variants.count)
                return holdOut(record, line: line, buffer: buffer, arm: experiment.variants.count, into: &batch)
            case .variant(let index):
                batch.baseCounts.countRecipient(arm: index)
                arm = index
            }
        }
        if let quietHours = campaign.quietHours {
            let verdict = quietHours.verdict(for: record.root)
            if verdict.usedDefaultZone { batch.baseCounts.defaultTimeZoneLines += 1 }
            if verdict.inside { return deferLine(record, line: line, buffer: buffer, arm: arm, into: &batch) }
        }
        context.begin(record: record.root)
        // The recipient id is written to the arena once, with the line's first request.
        var recipient: ByteRange?
        for route in record.routes {
            switch route {
            case .rejected(let index, let platform, let reason):
                batch.baseCounts.countDevice(provider: nil, arm: arm)
                rejectDevice(line.number, record: record, index: index, platform: platform, provider: nil, reason, arm: arm, into: &batch)
            case .notTargeted(_, _, let provider):
                batch.notTargetedTally[provider.ordinal] += 1
                if let arm { batch.countNotTargeted(arm: arm) }
            case .routed(let device):
                let routeID = campaign.routes.route(for: device, variant: arm ?? 0)
                // An open channel is targeted by name: `open` in the set is any of them.
                guard device.platform != .open || routeID != nil else {
                    batch.notTargetedTally[device.provider.ordinal] += 1
                    if let arm { batch.countNotTargeted(arm: arm) }
                    continue
                }
                context.device = device.object
                do throws(EncodeFailure) {
                    guard let routeID else { throw EncodeFailure(.noRoute(device, Self.missingSettings(device))) }
                    // Before the recipient id when this device writes it, so a failure drops it too.
                    let mark = batch.index.arena.count
                    if recipient == nil {
                        batch.index.arena.resetSeparator()
                        RequestLine.writeRaw(record.id, into: &batch.index.arena)
                        recipient = try .checked(mark, batch.index.arena.count)
                    }
                    let parts: RequestParts
                    do throws(EncodeFailure) {
                        parts = try encodeDevice(device, route: routeID, context: &context, into: &batch.index.arena)
                    } catch {
                        if recipient?.start == mark { recipient = nil }
                        batch.index.arena.truncate(to: mark, needsComma: false)
                        throw error
                    }
                    batch.index.append(RequestEntry(
                        line: line.number, device: UInt32(clamping: device.index), route: routeID,
                        flags: parts.truncated ? .truncated : [], recipient: recipient ?? .empty,
                        target: parts.target, body: parts.body, headers: parts.headers
                    ))
                    batch.requestTally[device.provider.ordinal] += 1
                    if let arm { batch.countRequest(arm: arm) }
                    if parts.truncated { batch.baseCounts.truncated += 1 }
                } catch {
                    batch.baseCounts.countDevice(provider: device.provider, arm: arm)
                    rejectDevice(line.number, record: record, index: device.index, platform: device.platform, provider: device.provider, error.reason, arm: arm, into: &batch)
                }
            }
        }
    }

    /// Writes one device's request parts to the arena through its route's encoder.
    func encodeDevice(
        _ device: RoutedDevice, route: RouteID, context: inout EncodeContext, into arena: inout JSONWriter
    ) throws(EncodeFailure) -> RequestParts {
        let policy = campaign.onOversize
        switch programs[route.index] {
        case .apns(let route):
            return try APNsEncoder.encode(route, device: device, policy: policy, context: &context, into: &arena)
        case .fcm(let route):
            return try FCMEncoder.encode(route, device: device, policy: policy, context: &context, into: &arena)
        case .webPush(let route):
            return try WebPushEncoder.encode(route, device: device, policy: policy, context: &context, into: &arena)
        case .adm(let route):
            return try ADMEncoder.encode(route, device: device, policy: policy, context: &context, into: &arena)
        case .webhook(let route):
            return try WebhookEncoder.encode(route, device: device, policy: policy, context: &context, into: &arena)
        }
    }

    /// The pipeline settings a route without a plan needs, for the `no_route` reject.
    static func missingSettings(_ device: RoutedDevice) -> String? {
        switch device.provider {
        case .apns: device.platform == .ios ? "providers.apns" : nil
        case .fcm: device.platform.allows(.fcm) ? "providers.fcm" : nil
        case .webpush: device.platform == .web ? "providers.webpush" : nil
        case .adm: device.platform == .amazon ? "providers.adm" : nil
        case .webhook: device.platform.allows(.webhook) ? "providers.\(device.platform.rawValue).url" : nil
        }
    }

    /// Every device of the line skipped for `reason` (another shard's recipient, quiet hours,
    /// the holdout), counted in experiment arm `arm` when there is one.
    func skipDevices(of record: AudienceRecord, _ reason: SkipReason, arm: Int? = nil, into batch: inout EncodedBatch) {
        for route in record.routes {
            let provider = route.device.provider
            batch.baseCounts.countDevice(provider: provider, arm: arm)
            batch.baseCounts.record(.skipped(reason), provider: provider, arm: arm)
        }
    }

    /// Quiet hours: every device of the line is skipped (`quiet_hours`) and the line goes, as read,
    /// to `deferred.ndjson`, so a later run taking that file as its audience decides each device afresh.
    func deferLine(_ record: AudienceRecord, line: AudienceLine, buffer: [UInt8], arm: Int?, into batch: inout EncodedBatch) {
        skipDevices(of: record, .quietHours, arm: arm, into: &batch)
        batch.baseCounts.deferredLines += 1
        Self.copyLine(line, of: buffer, into: &batch.deferred)
    }

    /// The experiment's holdout: every device of the line is skipped (`holdout`), whatever its
    /// token, and the line goes, as read, to `holdout.ndjson` (the control group to measure
    /// lift against).
    func holdOut(_ record: AudienceRecord, line: AudienceLine, buffer: [UInt8], arm: Int, into batch: inout EncodedBatch) {
        skipDevices(of: record, .holdout, arm: arm, into: &batch)
        Self.copyLine(line, of: buffer, into: &batch.holdout)
    }

    static func copyLine(_ line: AudienceLine, of buffer: [UInt8], into w: inout JSONWriter) {
        buffer.withUnsafeBytes { bytes in
            w.appendRaw(UnsafeRawBufferPointer(rebasing: bytes[line.range]))
        }
        w.appendRaw(byte: 0x0A)
    }

    func rejectLine(_ number: Int, id: JSONValue?, _ reason: RejectReason, into batch: inout EncodedBatch) {
        batch.baseCounts.linesRejected += 1
        RequestLine.writeReject(line: number, id: id, device: nil, platform: nil, provider: nil, reason, into: &batch.rejects)
    }

    func rejectDevice(
        _ number: Int, record: AudienceRecord, index: Int, platform: Platform?, provider: Provider?,
        _ reason: RejectReason, arm: Int?, into batch: inout EncodedBatch
    ) {
        batch.baseCounts.record(.rejected(reason), provider: provider, arm: arm)
        let variant = arm.flatMap { campaign.experiment?.name(of: .variant($0)) }
        RequestLine.writeReject(line: number, id: record.id, variant: variant, device: index, platform: platform, provider: provider, reason, into: &batch.rejects)
    }
}

extension RejectReason {
    static func noRoute(_ device: RoutedDevice, _ settings: String?) -> RejectReason {
        if let settings {
            return RejectReason("no_route", "device \(device.index): \(device.platform.rawValue) through \(device.provider.rawValue) needs \(settings) in the pipeline")
        }
        return RejectReason("no_route", "device \(device.index): \(device.platform.rawValue) through \(device.provider.rawValue) cannot be encoded by this version")
    }
}

