public import PushlineCore
public import PushlineTemplates

/// What to do with a payload over the provider's limit.
public enum OversizePolicy: String, Sendable {
    /// The device becomes a reject naming the size and the limit.
    case reject
    /// Shorten the personalized body (then title) at a grapheme boundary until it fits.
    case truncate
}

/// A pipeline compiled once: validated settings, compiled templates, and one request plan per
/// (platform, provider) route. Immutable and `Sendable`, shared by all encode workers.
public struct Campaign: Sendable {
    public var name: String
    public var audience: String?
    public var output: String?
    public var dialect: TemplateDialect
    public var strict: Bool
    public var style: PayloadStyle
    public var deviceTypes: Set<Platform>
    public var onOversize: OversizePolicy
    public var maxLineBytes: Int
    public var maxFieldBytes: Int
    public var gzipOutput: Bool
    /// Whether provider credentials are configured (without them a run is a dry run).
    public var hasCredentials: Bool

    /// Every route the campaign encodes (iOS→APNs, Android/iOS/web→FCM, web→Web Push, Fire OS→ADM,
    /// SMS, email and open-channel webhooks), compiled once: `routes.table` is what senders and
    /// the dry run read.
    public var routes: CampaignRoutes
    /// Send FCM requests as `{"validate_only":true,"message":…}` (a provider-side check that
    /// delivers nothing). Set before creating the `CampaignEncoder`.
    public var fcmValidateOnly = false

    /// Warnings found while compiling (errors stop compilation).
    public var warnings: [ConfigDiagnostic]
    /// Distinct personalized templates (identical sources share one), each rendered at most
    /// once per recipient however many devices and fields use it.
    public var templateSlots = 0
    /// `dedupe:` (default true): a device token seen earlier in the audience is skipped
    /// (`duplicate_token`); the runtime's `TokenDedupe` does it.
    public var dedupeTokens = true
    /// `quiet_hours:`: recipients inside the window are deferred (their lines to `deferred.ndjson`).
    public var quietHours: QuietHours?
    /// `--shard I/N`: only the recipients of this shard are addressed (set by the run, not the
    /// pipeline file).
    public var shard: AudienceShard?
    /// `experiment:`: each recipient's arm; the routes are every variant's, tagged with it.
    public var experiment: ExperimentSplit?

    /// What the campaign was compiled from, so an encode worker can compile its own copy of the
    /// routes (`recompiled()`); nil for a campaign built some other way.
    var source: CompileSource?

    struct CompileSource: Sendable {
        let root: ConfigNode
        let now: Int
        let serviceAccountProject: String?
    }
}

extension Campaign {
    /// Whether some route of this campaign produces requests for `provider`.
    public func encodes(_ provider: Provider) -> Bool {
        routes.table.reaches(provider)
    }

    /// The route table (one entry per route, by `RouteID`).
    public var routeTable: RouteTable { routes.table }
}

public struct CampaignCompileError: Error, Sendable, CustomStringConvertible {
    /// Every problem found, in file order.
    public var diagnostics: [ConfigDiagnostic] {
        didSet { diagnostics = Self.ordered(diagnostics) }
    }

    public init(diagnostics: [ConfigDiagnostic]) {
        self.diagnostics = Self.ordered(diagnostics)
    }

    static func ordered(_ diagnostics: [ConfigDiagnostic]) -> [ConfigDiagnostic] {
        diagnostics.enumerated().sorted { a, b in
            (a.element.line, a.element.column, a.offset) < (b.element.line, b.element.column, b.offset)
        }.map(\.element)
    }
    public var description: String { diagnostics.map(\.description).joined(separator: "\n") }
}

extension Campaign {
    /// Validates a pipeline and compiles it. Every problem is reported at once, with its path.
    /// `now` is the run's start (UNIX seconds), from which relative expiries count.
    /// `serviceAccountProject`: the `project_id` of the loaded `providers.fcm.service_account`
    /// file, used when the pipeline gives no `providers.fcm.project_id` (the loader reads the file
    /// and checks the two agree; compiling does no I/O).
    public static func compile(_ root: ConfigNode, now: Int, serviceAccountProject: String? = nil) throws(CampaignCompileError) -> Campaign {
        guard let experiment = root["experiment"] else { return try compileOne(root, now: now, serviceAccountProject: serviceAccountProject) }
        var campaign = try CampaignExperiment.compile(root, experiment: experiment, now: now, serviceAccountProject: serviceAccountProject) { (node: ConfigNode) throws(CampaignCompileError) -> Campaign in
            try compileOne(node, now: now, serviceAccountProject: serviceAccountProject)
        }
        campaign.source = CompileSource(root: root, now: now, serviceAccountProject: serviceAccountProject)
        return campaign
    }

    /// A pipeline without an experiment, or one variant's (with the experiment's key still
    /// there: the schema checks it with the rest, and this ignores it).
    static func compileOne(_ root: ConfigNode, now: Int, serviceAccountProject: String?) throws(CampaignCompileError) -> Campaign {
        var log = DiagnosticLog()
        let requireHTTPS = root["limits"]?["require_https_urls"]?.boolValue ?? false
        let validation = ValidationOptions(requireHTTPSURLs: requireHTTPS)
        SchemaValidator.validate(root, as: .object(PipelineSchema.pipeline), at: ConfigPath(), into: &log, options: validation)
        if log.hasErrors {
            // The mapping below needs a valid shape, but template errors can still be found, so
            // one `validate` lists every problem of the file.
            TemplateCheck.collect(in: root, into: &log)
            throw CampaignCompileError(diagnostics: log.diagnostics)
        }

        // Defaults come from the schema (the validated values are among its choices).
        let pipeline = PipelineSchema.pipeline, limits = PipelineSchema.limits
        let dialect = TemplateDialect(rawValue: pipeline["personalization"].string(in: root) ?? "") ?? .liquid
        let strict = root["strict"]?.boolValue ?? false
        let maxFieldBytes = limits["max_field_bytes"].int(in: root["limits"]) ?? 8192
        var snippets: [String: String] = [:]
        for (key, value) in root["snippets"]?.mappingEntries ?? [] { snippets[key] = value.stringValue }
        let options = TemplateOptions(strict: strict, maxOutputBytes: maxFieldBytes, snippets: snippets, now: now)
        var context = CompileContext(dialect: dialect, templateOptions: options, validation: validation, now: now)
        context.log = log

        let style = PayloadStyle(rawValue: pipeline["style"].string(in: root) ?? "") ?? .airship
        let notification = root["notification"]!
        let path = ConfigPath("notification")
        let providers = root["providers"]
        let targets = Targets(root: root, notification: notification, log: &context.log)
        if style == .airship, let link = notification["link"] {
            context.log.error(path / "link", StyleMessages.linkNeedsStyle, at: link)
        }
        if style != .custom, let custom = notification["custom"] {
            context.log.error(path / "custom", "raw payloads are used only with style: custom", at: custom)
        }

        var plans = Plans()
        let fcmProject = providers?["fcm"]?["project_id"]?.stringValue ?? (providers?["fcm"]?["service_account"] != nil ? serviceAccountProject : nil)

        if targets.platforms.contains(.ios), let ios = IOSMapping.map(notification: notification, path: path, style: style, context: &context) {
            if let topic = providers?["apns"]?["topic"]?.stringValue {
                let environment = APNsEnvironment(rawValue: PipelineSchema.apnsProvider["environment"].string(in: providers?["apns"]) ?? "") ?? .production
                plans.apns = APNsPlan(
                    payload: ios.payload, pushType: ios.pushType, priority: ios.priority,
                    topic: ios.isLiveActivity ? topic + ".push-type.liveactivity" : topic,
                    expiration: ios.expiration, collapseID: ios.collapseID, environment: environment,
                    payloadLimit: ProviderLimits.apnsPayload
                )
            } else if fcmProject == nil || ios.isLiveActivity {
                context.log.error(ConfigPath("providers.apns.topic"), "is required when device_types includes ios (the app's bundle id, sent as apns-topic)", at: providers ?? root)
            }
            if let fcmProject {
                if ios.isLiveActivity {
                    context.log.warning(path / "ios" / "live_activity", "Live Activity pushes go through APNs only: iOS devices routed through FCM are rejected", at: notification["ios"])
                } else {
                    plans.fcmIOS = FCMPlan(message: [PayloadMember("apns", FCMMapping.apnsBlock(ios), omitIfEmpty: false)], projectID: fcmProject, payloadLimit: ProviderLimits.fcmPayload)
                }
            }
        }
        if targets.platforms.contains(.android) {
            let message = AndroidMapping.map(notification: notification, path: path, style: style, context: &context)
            if let fcmProject {
                plans.fcmAndroid = FCMPlan(message: message, projectID: fcmProject, payloadLimit: ProviderLimits.fcmPayload)
            } else {
                context.log.error(ConfigPath("providers.fcm.project_id"), "is required when device_types includes android (the Firebase project of the FCM v1 URL; or give providers.fcm.service_account, whose project_id is used)", at: providers ?? root)
            }
        }
        if targets.platforms.contains(.amazon) {
            plans.adm = AmazonMapping.map(notification: notification, path: path, style: style, context: &context)
        }
        if targets.platforms.contains(.web) {
            let web = WebMapping.map(notification: notification, path: path, style: style, context: &context)
            plans.webPush = WebPushPlan(notification: web.notification, ttl: String(web.ttl), urgency: web.urgency, topic: web.topic, plaintextLimit: ProviderLimits.webPushPlaintext)
            if let fcmProject {
                plans.fcmWeb = FCMPlan(message: [PayloadMember("webpush", FCMMapping.webpushBlock(web), omitIfEmpty: false)], projectID: fcmProject, payloadLimit: ProviderLimits.fcmPayload)
            }
        }
        if targets.platforms.contains(.sms), let url = webhookURL(providers, "sms", root: root, log: &context.log) {
            plans.sms = MessagingMapping.sms(notification: notification, path: path, url: url, context: &context)
        }
        if targets.platforms.contains(.email), let url = webhookURL(providers, "email", root: root, log: &context.log) {
            plans.email = MessagingMapping.email(notification: notification, path: path, url: url, context: &context)
        }
        for name in targets.openChannels {
            guard let url = webhookURL(providers, Platform.openPrefix + name, root: root, log: &context.log) else { continue }
            if let plan = MessagingMapping.open(name: name, notification: notification, path: path, url: url, context: &context) {
                plans.open.append(OpenChannelPlan(name: name, plan: plan))
            }
        }

        if context.log.hasErrors { throw CampaignCompileError(diagnostics: context.log.diagnostics) }
        var campaign = Campaign(
            name: root["name"]?.stringValue ?? "campaign",
            audience: root["audience"]?.stringValue,
            output: root["output"]?.stringValue,
            dialect: dialect, strict: strict, style: style, deviceTypes: targets.platforms,
            onOversize: OversizePolicy(rawValue: limits["on_oversize"].string(in: root["limits"]) ?? "") ?? .reject,
            maxLineBytes: limits["max_line_bytes"].int(in: root["limits"]) ?? (1 << 20),
            maxFieldBytes: maxFieldBytes,
            gzipOutput: root["dry_run"]?["gzip"]?.boolValue ?? false,
            hasCredentials: providers?["apns"]?["key_file"] != nil || providers?["fcm"]?["service_account"] != nil,
            routes: plans.routes(),
            warnings: context.log.warnings,
            templateSlots: context.templateSlots
        )
        campaign.dedupeTokens = root["dedupe"]?.boolValue ?? true
        campaign.quietHours = QuietHoursSchema.compile(root["quiet_hours"], now: now)
        campaign.source = CompileSource(root: root, now: now, serviceAccountProject: serviceAccountProject)
        return campaign
    }

    /// The campaign compiled again from the same source: the same route table and split, with
    /// templates, plans and the split's tables sharing no storage with these. Two encode workers
    /// reading one campaign's compiled objects each count references on the same cache lines
    /// (retain and release were a fifth of a two-worker dry run's CPU, a twelfth with one worker).
    /// Nil when there is no source or the table came out different (it never should: routes are
    /// added in a fixed order).
    func recompiled() -> Campaign? {
        guard let source, let fresh = try? Campaign.compile(source.root, now: source.now, serviceAccountProject: source.serviceAccountProject),
              fresh.routes.table.hasSameRoutes(as: routes.table), fresh.templateSlots == templateSlots,
              fresh.experiment == experiment else { return nil }
        return fresh
    }
}

/// The plans compiled so far (one per route).
struct Plans {
    var apns: APNsPlan?
    var fcmAndroid: FCMPlan?
    var fcmIOS: FCMPlan?
    var fcmWeb: FCMPlan?
    var adm: ADMPlan?
    var webPush: WebPushPlan?
    var sms: WebhookPlan?
    var email: WebhookPlan?
    var open: [OpenChannelPlan] = []

    /// The route table: one route per plan, each listed here once.
    func routes() -> CampaignRoutes {
        var routes = CampaignRoutes()
        if let apns { routes.addAPNs(apns) }
        if let fcmIOS { routes.addFCM(fcmIOS, platform: .ios) }
        if let fcmAndroid { routes.addFCM(fcmAndroid, platform: .android) }
        if let fcmWeb { routes.addFCM(fcmWeb, platform: .web) }
        if let webPush { routes.addWebPush(webPush) }
        if let adm { routes.addADM(adm) }
        if let sms { routes.addWebhook(sms, platform: .sms) }
        if let email { routes.addWebhook(email, platform: .email) }
        for channel in open { routes.addWebhook(channel.plan, platform: .open, openChannel: channel.name) }
        return routes
    }
}

/// Which devices the campaign addresses. With `device_types`, exactly those; without it, iOS and
/// Android plus every channel the notification has an override for (web, amazon, sms or mms,
/// email, open::<name>).
struct Targets {
    var platforms: Set<Platform> = []
    var openChannels: [String] = []

    init(root: ConfigNode, notification: ConfigNode, log: inout DiagnosticLog) {
        if let listed = root["device_types"]?.sequenceElements {
            for entry in listed {
                guard let text = entry.stringValue, let (platform, open) = Platform.parse(deviceType: text) else { continue }
                platforms.insert(platform)
                if let open, !openChannels.contains(open) { openChannels.append(open) }
            }
            if platforms.isEmpty { log.error(ConfigPath("device_types"), "lists no device type", at: root["device_types"]) }
            return
        }
        platforms = [.ios, .android]
        for (key, platform) in [("web", Platform.web), ("amazon", .amazon), ("sms", .sms), ("mms", .sms), ("email", .email)] where notification[key] != nil {
            platforms.insert(platform)
        }
        for (key, _) in notification.mappingEntries ?? [] where key.hasPrefix(Platform.openPrefix) {
            platforms.insert(.open)
            openChannels.append(String(key.dropFirst(Platform.openPrefix.count)))
        }
    }
}

extension Campaign {
    /// `providers.<channel>.url`, required for each webhook channel the campaign addresses.
    static func webhookURL(_ providers: ConfigNode?, _ channel: String, root: ConfigNode, log: inout DiagnosticLog) -> String? {
        if let url = providers?[channel]?["url"]?.stringValue { return url }
        log.error(ConfigPath("providers") / channel / "url", "is required when device_types includes \(channel) (the webhook its requests are POSTed to)", at: providers ?? root)
        return nil
    }
}

/// Pieces of the FCM v1 message shared by several platforms.
enum FCMMapping {
    /// `message.apns` for iOS devices reached through FCM: the APNs headers as strings and the
    /// same payload APNs would get.
    static func apnsBlock(_ ios: IOSMapping.Result) -> PayloadNode {
        var headers: [PayloadMember] = [
            PayloadMember("apns-priority", .string(String(ios.priority))),
            PayloadMember("apns-push-type", .string(ios.pushType)),
        ]
        if let expiration = ios.expiration { headers.append(PayloadMember("apns-expiration", .string(String(expiration)))) }
        // The same header rule as the APNs route: FCM forwards these as HTTP/2 headers.
        if let collapse = PayloadNode.header(ios.collapseID) { headers.append(PayloadMember("apns-collapse-id", collapse)) }
        return .makeObject([
            PayloadMember("headers", .makeObject(headers)),
            PayloadMember("payload", ios.payload, omitIfEmpty: false),
        ])
    }

    /// `message.webpush` for web devices reached through FCM: the RFC 8030 headers as strings,
    /// the notification (FCM passes it to the browser as-is) and the https link to open.
    static func webpushBlock(_ web: WebMapping.Result) -> PayloadNode {
        var headers: [PayloadMember] = [
            PayloadMember("TTL", .string(String(web.ttl))),
            PayloadMember("Urgency", .string(web.urgency)),
        ]
        if let topic = web.topic { headers.append(PayloadMember("Topic", .string(topic))) }
        var members: [PayloadMember] = [
            PayloadMember("headers", .makeObject(headers)),
            PayloadMember("notification", web.notification),
        ]
        if let link = web.link { members.append(PayloadMember("fcm_options", .makeObject([PayloadMember("link", link)]))) }
        return .makeObject(members)
    }
}
