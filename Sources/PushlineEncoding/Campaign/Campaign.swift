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

    public var apns: APNsPlan?
    /// Android devices through FCM.
    public var fcmAndroid: FCMPlan?
    /// iOS devices through FCM (APNs payload carried in `message.apns`).
    public var fcmIOS: FCMPlan?

    /// Warnings found while compiling (errors stop compilation).
    public var warnings: [ConfigDiagnostic]
}

extension Campaign {
    /// Whether some route of this campaign produces requests for `provider`.
    public func encodes(_ provider: Provider) -> Bool {
        switch provider {
        case .apns: apns != nil
        case .fcm: fcmAndroid != nil || fcmIOS != nil
        case .webpush, .adm: false
        }
    }
}

public struct CampaignCompileError: Error, Sendable, CustomStringConvertible {
    public var diagnostics: [ConfigDiagnostic]
    public var description: String { diagnostics.map(\.description).joined(separator: "\n") }
}

extension Campaign {
    /// Validates a pipeline and compiles it. Every problem is reported at once, with its path.
    /// `now` is the run's start (UNIX seconds), from which relative expiries count.
    public static func compile(_ root: ConfigNode, now: Int) throws(CampaignCompileError) -> Campaign {
        var log = DiagnosticLog()
        let requireHTTPS = root["limits"]?["require_https_urls"]?.boolValue ?? false
        let validation = ValidationOptions(requireHTTPSURLs: requireHTTPS)
        SchemaValidator.validate(root, as: .object(PipelineSchema.pipeline), at: ConfigPath(), into: &log, options: validation)
        if log.hasErrors { throw CampaignCompileError(diagnostics: log.diagnostics) }

        let dialect = TemplateDialect(rawValue: root["personalization"]?.stringValue ?? "liquid") ?? .liquid
        let strict = root["strict"]?.boolValue ?? false
        let maxFieldBytes = root["limits"]?["max_field_bytes"]?.intValue ?? 8192
        var snippets: [String: String] = [:]
        for (key, value) in root["snippets"]?.mappingEntries ?? [] { snippets[key] = value.stringValue }
        let options = TemplateOptions(strict: strict, maxOutputBytes: maxFieldBytes, snippets: snippets)
        var context = CompileContext(dialect: dialect, templateOptions: options, validation: validation, now: now)
        context.log = log

        var deviceTypes = Set(Platform.allCases)
        if let listed = root["device_types"]?.sequenceElements {
            deviceTypes = Set(listed.compactMap { $0.stringValue.flatMap(Platform.init(rawValue:)) })
            if deviceTypes.isEmpty { context.log.error(ConfigPath("device_types"), "lists no device type", at: root["device_types"]) }
        }
        let style = PayloadStyle(rawValue: root["style"]?.stringValue ?? "airship") ?? .airship
        if style != .airship {
            context.log.error(ConfigPath("style"), "style '\(style.rawValue)' is not available in this version; use airship", at: root["style"])
        }
        let notification = root["notification"]!
        let path = ConfigPath("notification")
        let providers = root["providers"]

        var apns: APNsPlan?
        var fcmIOS: FCMPlan?
        var fcmAndroid: FCMPlan?
        let fcmProject = providers?["fcm"]?["project_id"]?.stringValue

        if deviceTypes.contains(.ios), let ios = IOSMapping.map(notification: notification, path: path, context: &context) {
            if let topic = providers?["apns"]?["topic"]?.stringValue {
                let environment = APNsEnvironment(rawValue: providers?["apns"]?["environment"]?.stringValue ?? "production") ?? .production
                apns = APNsPlan(
                    payload: ios.payload, pushType: ios.pushType, priority: ios.priority, topic: topic,
                    expiration: ios.expiration, collapseID: ios.collapseID, environment: environment,
                    payloadLimit: ProviderLimits.apnsPayload
                )
            } else if fcmProject == nil {
                context.log.error(ConfigPath("providers.apns.topic"), "is required when device_types includes ios (the app's bundle id, sent as apns-topic)", at: providers ?? root)
            }
            if let fcmProject {
                fcmIOS = FCMPlan(message: [PayloadMember("apns", FCMMapping.apnsBlock(ios), omitIfEmpty: false)], projectID: fcmProject, payloadLimit: ProviderLimits.fcmPayload)
            }
        }
        if deviceTypes.contains(.android) {
            let message = AndroidMapping.map(notification: notification, path: path, context: &context)
            if let fcmProject {
                fcmAndroid = FCMPlan(message: message, projectID: fcmProject, payloadLimit: ProviderLimits.fcmPayload)
            } else {
                context.log.error(ConfigPath("providers.fcm.project_id"), "is required when device_types includes android (the Firebase project of the FCM v1 URL)", at: providers ?? root)
            }
        }
        for platform in [Platform.web, .amazon] where deviceTypes.contains(platform) && root["device_types"] != nil {
            context.log.error(ConfigPath("device_types"), "'\(platform.rawValue)' devices cannot be encoded by this version (APNs and FCM only)", at: root["device_types"])
        }
        if root["device_types"] == nil { deviceTypes = [.ios, .android] }

        if context.log.hasErrors { throw CampaignCompileError(diagnostics: context.log.diagnostics) }
        return Campaign(
            name: root["name"]?.stringValue ?? "campaign",
            audience: root["audience"]?.stringValue,
            output: root["output"]?.stringValue,
            dialect: dialect, strict: strict, style: style, deviceTypes: deviceTypes,
            onOversize: OversizePolicy(rawValue: root["limits"]?["on_oversize"]?.stringValue ?? "reject") ?? .reject,
            maxLineBytes: root["limits"]?["max_line_bytes"]?.intValue ?? (1 << 20),
            maxFieldBytes: maxFieldBytes,
            gzipOutput: root["dry_run"]?["gzip"]?.boolValue ?? false,
            hasCredentials: providers?["apns"]?["key_file"] != nil || providers?["fcm"]?["service_account"] != nil,
            apns: apns, fcmAndroid: fcmAndroid, fcmIOS: fcmIOS,
            warnings: context.log.warnings
        )
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
        if let collapse = ios.collapseID { headers.append(PayloadMember("apns-collapse-id", .templated(collapse))) }
        return .makeObject([
            PayloadMember("headers", .makeObject(headers)),
            PayloadMember("payload", ios.payload, omitIfEmpty: false),
        ])
    }
}
