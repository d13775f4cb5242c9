public import PushlineCore
import PushlineTemplates

/// Parses, routes and encodes audience lines for one compiled campaign. Pure: no I/O, no shared
/// state, so the runtime runs one per worker over whole batches.
public struct CampaignEncoder: Sendable {
    public let campaign: Campaign
    /// Nesting bound for audience lines (a deeper line is a reject, never a stack overflow).
    public var maxJSONDepth = 64

    /// Each route's framing bytes and compiled body.
    let apnsRoute: CompiledRoute?
    let fcmIOSRoute: CompiledRoute?
    let fcmAndroidRoute: CompiledRoute?
    let fcmWebRoute: CompiledRoute?
    /// ADM `data` and the Web Push notification, compiled like the routes' bodies.
    let admBody: PayloadProgram?
    let webPushBody: PayloadProgram?

    public init(campaign: Campaign) {
        self.campaign = campaign
        apnsRoute = campaign.apns.map(CompiledRoute.apns)
        fcmIOSRoute = campaign.fcmIOS.map { CompiledRoute.fcm($0, platform: .ios) }
        fcmAndroidRoute = campaign.fcmAndroid.map { CompiledRoute.fcm($0, platform: .android) }
        fcmWebRoute = campaign.fcmWeb.map { CompiledRoute.fcm($0, platform: .web) }
        admBody = campaign.adm.map { PayloadProgram($0.data) }
        webPushBody = campaign.webPush.map { PayloadProgram($0.notification) }
    }

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
        let document: JSONDocument
        do {
            document = try JSONDocument(buffer: buffer, range: line.range, maxDepth: maxJSONDepth)
        } catch {
            return rejectLine(line.number, id: nil, .invalidJSON(error), into: &batch)
        }
        let record: AudienceRecord
        switch AudienceRouter.route(document.root) {
        case .failure(let reason):
            return rejectLine(line.number, id: document.root.member("id"), reason, into: &batch)
        case .success(let routed):
            record = routed
        }
        context.begin(record: record.root)
        for route in record.routes {
            batch.baseCounts.devices += 1
            switch route {
            case .rejected(let index, let platform, let reason):
                rejectDevice(line.number, record: record, index: index, platform: platform, provider: nil, reason, into: &batch)
            case .routed(let device):
                guard campaign.deviceTypes.contains(device.platform), device.platform != .open || campaign.openChannel(of: device) != nil else {
                    batch.baseCounts.skipped[SkipReason.notTargeted(device.platform).code, default: 0] += 1
                    continue
                }
                context.device = device.object
                do {
                    let truncated = try encodeDevice(device, record: record, line: line.number, context: &context, into: &batch.requests[device.provider.ordinal])
                    batch.writtenTally[device.provider.ordinal] += 1
                    if truncated { batch.baseCounts.truncated += 1 }
                } catch {
                    rejectDevice(line.number, record: record, index: device.index, platform: device.platform, provider: device.provider, error.reason, into: &batch)
                }
            }
        }
    }

    /// Appends one request line for `device`; returns whether text was truncated to fit.
    func encodeDevice(
        _ device: RoutedDevice, record: AudienceRecord, line: Int,
        context: inout EncodeContext, into writer: inout JSONWriter
    ) throws(EncodeFailure) -> Bool {
        let mark = writer.count
        do throws(EncodeFailure) {
            switch (device.platform, device.provider) {
            case (.ios, .apns):
                guard let plan = campaign.apns, let route = apnsRoute else { throw EncodeFailure(.noRoute(device, "providers.apns")) }
                return try APNsEncoder.encode(plan, route: route, device: device, record: record, line: line, policy: campaign.onOversize, context: &context, into: &writer)
            case (.ios, .fcm):
                guard let plan = campaign.fcmIOS, let route = fcmIOSRoute else { throw EncodeFailure(.noRoute(device, "providers.fcm")) }
                return try FCMEncoder.encode(plan, route: route, device: device, record: record, line: line, policy: campaign.onOversize, context: &context, into: &writer)
            case (.android, .fcm):
                guard let plan = campaign.fcmAndroid, let route = fcmAndroidRoute else { throw EncodeFailure(.noRoute(device, "providers.fcm")) }
                return try FCMEncoder.encode(plan, route: route, device: device, record: record, line: line, policy: campaign.onOversize, context: &context, into: &writer)
            case (.web, .fcm):
                guard let plan = campaign.fcmWeb, let route = fcmWebRoute else { throw EncodeFailure(.noRoute(device, "providers.fcm")) }
                return try FCMEncoder.encode(plan, route: route, device: device, record: record, line: line, policy: campaign.onOversize, context: &context, into: &writer)
            case (.web, .webpush):
                guard let plan = campaign.webPush, let body = webPushBody else { throw EncodeFailure(.noRoute(device, nil)) }
                return try WebPushEncoder.encode(plan, body: body, device: device, record: record, line: line, policy: campaign.onOversize, context: &context, into: &writer)
            case (.amazon, .adm):
                guard let plan = campaign.adm, let body = admBody else { throw EncodeFailure(.noRoute(device, nil)) }
                return try ADMEncoder.encode(plan, body: body, device: device, record: record, line: line, policy: campaign.onOversize, context: &context, into: &writer)
            case (.sms, .webhook), (.email, .webhook), (.open, .webhook):
                let plan = switch device.platform {
                case .sms: campaign.sms
                case .email: campaign.email
                default: campaign.openChannel(of: device)
                }
                guard let plan else { throw EncodeFailure(.noRoute(device, "providers.\(device.platform.rawValue).url")) }
                return try WebhookEncoder.encode(plan, device: device, record: record, line: line, policy: campaign.onOversize, context: &context, into: &writer)
            default:
                throw EncodeFailure(.noRoute(device, nil))
            }
        } catch {
            writer.truncate(to: mark, needsComma: false)
            throw error
        }
    }

    func rejectLine(_ number: Int, id: JSONValue?, _ reason: RejectReason, into batch: inout EncodedBatch) {
        batch.baseCounts.linesRejected += 1
        RequestLine.writeReject(line: number, id: id, device: nil, platform: nil, provider: nil, reason, into: &batch.rejects)
    }

    func rejectDevice(
        _ number: Int, record: AudienceRecord, index: Int, platform: Platform?, provider: Provider?,
        _ reason: RejectReason, into batch: inout EncodedBatch
    ) {
        batch.baseCounts.rejected[reason.code, default: 0] += 1
        RequestLine.writeReject(line: number, id: record.id, device: index, platform: platform, provider: provider, reason, into: &batch.rejects)
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
