import PushlineCore

/// The pipeline file's top level (docs/pipeline.md documents each key).
public enum PipelineSchema {
    public static let limits = ObjectSchema("limits", [
        SchemaProperty("on_oversize", .enumeration(["reject", "truncate"]), default: .string("reject")),
        SchemaProperty("max_line_bytes", .integer(1024...(64 << 20)), default: .int(1 << 20)),
        SchemaProperty("max_field_bytes", .integer(16...(1 << 20)), default: .int(8192)),
        SchemaProperty("require_https_urls", .boolean),
    ])

    /// How many connections and streams a sending lane may use, and its rate: shared by APNs and
    /// FCM (their defaults differ: `ProviderSendDefaults` in PushlineRuntime, docs/pipeline.md).
    static let sendingProperties: [SchemaProperty] = [
        // An origin replacing the provider's host (an emulator, a proxy): `ProviderEndpoint`.
        SchemaProperty("endpoint", .string(.constant)),
        // Extra trust anchors (PEM), relative to the pipeline file; verification stays on.
        SchemaProperty("ca_file", .string(.constant)),
        SchemaProperty("connections", .integer(sendingConnections)),
        SchemaProperty("streams", .integer(sendingStreams)),
        SchemaProperty("transfer_threads", .integer(SendingLimits.transferThreads)),
        // `10000/s`, `600000/min`, `N/h`: parsed by the sender's `SendRate` when loading.
        SchemaProperty("rate", .string(.constant)),
        SchemaProperty("burst", .integer(1...10_000_000)),
    ]

    /// Which engine sends an HTTP/2 provider and through which proxy (APNs, FCM, Web Push, ADM;
    /// webhooks are HTTP/1.1 and always libcurl): docs/delivery.md, "Choosing the engine".
    static let engineProperties: [SchemaProperty] = [
        // `nghttp2` (the default) or `curl`; a proxy means libcurl whatever this says.
        SchemaProperty("transport", .enumeration(["nghttp2", "curl"]), default: .string("nghttp2")),
        // `http(s)://host[:port]`: `ProviderProxy`.
        SchemaProperty("proxy", .string(.constant)),
    ]

    /// `proxy` is an http(s) proxy origin; `transport: nghttp2` written beside it is a
    /// contradiction (the nghttp2 engine never goes through a proxy).
    static let engineRule: SchemaRule = { node, path, log, _ in
        // A templated value is the string check's to report (it cannot be personalized).
        guard let value = node["proxy"], let text = value.stringValue, !isTemplated(text) else { return }
        if text.isEmpty {
            log.error(path / "proxy", "must not be empty (leave proxy out to use the environment's HTTPS_PROXY, if any)", at: value)
            return
        }
        if case .failure(let problem) = ProviderProxy.url(text) {
            let found = ProviderProxy.quotable(text).map { ", found '\($0)'" } ?? ""
            log.error(path / "proxy", "\(problem)\(found)", at: value)
        }
        if let transport = node["transport"], transport.stringValue == "nghttp2" {
            log.error(path / "transport", "is nghttp2, which never sends through a proxy: a provider with proxy: sends with libcurl (write transport: curl, or leave transport out)", at: transport)
        }
    }

    /// Connections per provider (`SendingLimits`, shared with the sender and the transport).
    public static let sendingConnections = SendingLimits.connections
    /// Concurrent streams per connection (`SendingLimits`).
    public static let sendingStreams = SendingLimits.streamsPerConnection

    public static let apnsProvider = ObjectSchema("providers.apns", [
        SchemaProperty("topic", .string(.header(maxBytes: WireValue.maxHeaderBytes, personalizable: false)), required: true),
        SchemaProperty("environment", .enumeration(APNsEnvironment.allCases.map(\.rawValue)), default: .string("production")),
        // Token authentication: all three or none (`apnsCredentialsRule`).
        SchemaProperty("team_id", .string(.constant)),
        SchemaProperty("key_id", .string(.constant)),
        SchemaProperty("key_file", .string(.constant)),
    ] + sendingProperties + engineProperties, rules: [apnsCredentialsRule, sendingRule, engineRule])

    public static let fcmProvider = ObjectSchema("providers.fcm", [
        // The FCM URL's path segment: `…/v1/projects/<project_id>/messages:send`. Optional when
        // `service_account` is given: the account file's project_id is used (`fcmProjectRule`).
        SchemaProperty("project_id", .string(.pathSegment)),
        SchemaProperty("service_account", .string(.constant)),
    ] + sendingProperties + engineProperties, rules: [fcmProjectRule, sendingRule, engineRule])

    static let apnsCredentialsRule: SchemaRule = { node, path, log, _ in
        let names = ["team_id", "key_id", "key_file"]
        let given = names.filter { node[$0] != nil }
        guard !given.isEmpty else { return }
        for name in names where node[name] == nil {
            log.error(path / name, "is required with \(given.joined(separator: " and ")) (APNs token authentication needs team_id, key_id and key_file)", at: node)
        }
        for name in ["team_id", "key_id"] {
            guard let value = node[name], let text = value.stringValue else { continue }
            let bytes = text.utf8
            if bytes.isEmpty || bytes.count > 64 || !bytes.allSatisfy({ isASCIIAlphanumeric($0) }) {
                log.error(path / name, "expected 1 to 64 ASCII letters and digits (Apple's are 10 characters), found '\(PrintableName.bounded(text, limit: 80))'", at: value)
            }
        }
        nonEmpty(["key_file"], in: node, path: path, log: &log)
    }

    static let fcmProjectRule: SchemaRule = { node, path, log, _ in
        if node["project_id"] == nil && node["service_account"] == nil {
            log.error(path / "project_id", "is required in providers.fcm (or give service_account: its project_id is used)", at: node)
        }
        nonEmpty(["service_account"], in: node, path: path, log: &log)
    }

    /// The settings every sending provider shares: the endpoint is an origin, files are named.
    static let sendingRule: SchemaRule = { node, path, log, _ in
        if let value = node["endpoint"], let text = value.stringValue, case .failure(let problem) = ProviderEndpoint.origin(text) {
            log.error(path / "endpoint", "\(problem), found '\(PrintableName.bounded(text, limit: 200))'", at: value)
        }
        nonEmpty(["ca_file", "rate"], in: node, path: path, log: &log)
    }

    static func nonEmpty(_ names: [String], in node: ConfigNode, path: ConfigPath, log: inout DiagnosticLog) {
        for name in names {
            if let value = node[name], value.stringValue?.isEmpty == true {
                log.error(path / name, "must not be empty", at: value)
            }
        }
    }

    static func isASCIIAlphanumeric(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
    }

    /// ADM: the security profile's client id and secret (the secret in a file, or inline), the
    /// Login with Amazon token endpoint, and the lane settings.
    public static let admProvider = ObjectSchema("providers.adm", [
        SchemaProperty("client_id", .string(.constant)),
        // A file holding the client secret alone (kept out of the pipeline file).
        SchemaProperty("client_secret_file", .string(.constant)),
        SchemaProperty("client_secret", .string(.constant)),
        // Default https://api.amazon.com/auth/O2/token.
        SchemaProperty("token_uri", .string(.constant)),
    ] + sendingProperties + engineProperties, rules: [admCredentialsRule, sendingRule, engineRule])

    static let admCredentialsRule: SchemaRule = { node, path, log, _ in
        let secrets = ["client_secret_file", "client_secret"].filter { node[$0] != nil }
        if secrets.count > 1 {
            log.error(path / "client_secret", "give client_secret_file or client_secret, not both", at: node)
        }
        if node["client_id"] != nil, secrets.isEmpty {
            log.error(path / "client_secret_file", "is required with client_id (the security profile's client secret, in a file)", at: node)
        }
        if node["client_id"] == nil, !secrets.isEmpty {
            log.error(path / "client_id", "is required with \(secrets[0]) (the security profile's client id)", at: node)
        }
        nonEmpty(["client_id", "client_secret_file", "client_secret", "token_uri"], in: node, path: path, log: &log)
    }

    /// Web Push: the VAPID key and subject, and the lane settings, which hold per push service
    /// origin (each subscription endpoint is its own URL, so there is no `endpoint`).
    public static let webPushProvider = ObjectSchema("providers.webpush", [
        // A PEM file or a file holding the base64url private key (`VAPIDKey.load`).
        SchemaProperty("vapid_private_key", .string(.constant)),
        // `mailto:` or `https:` contact, the JWT's `sub` (RFC 8292).
        SchemaProperty("subject", .string(.constant)),
        // How many push services (origins) a run sends to at most.
        SchemaProperty("push_services", .integer(1...256)),
        // Endpoints on private, loopback or link-local addresses are refused unless this is true.
        SchemaProperty("allow_private_endpoints", .boolean),
    ] + sendingProperties.filter { $0.name != "endpoint" } + engineProperties, rules: [webPushCredentialsRule, sendingRule, engineRule])

    static let webPushCredentialsRule: SchemaRule = { node, path, log, _ in
        let names = ["vapid_private_key", "subject"]
        let given = names.filter { node[$0] != nil }
        if !given.isEmpty {
            for name in names where node[name] == nil {
                log.error(path / name, "is required with \(given.joined(separator: " and ")) (VAPID signs with the key and names the subject)", at: node)
            }
        }
        if let value = node["subject"], let text = value.stringValue {
            let lower = text.lowercased()
            if !(lower.hasPrefix("mailto:") || lower.hasPrefix("https:")) || text.utf8.count > 256
                || text.utf8.contains(where: { $0 <= 0x20 || $0 >= 0x7F || $0 == 0x22 || $0 == 0x5C }) {
                log.error(path / "subject", "expected a mailto: or https: URI of at most 256 printable characters (RFC 8292), found '\(PrintableName.bounded(text, limit: 100))'", at: value)
            }
        }
        nonEmpty(["vapid_private_key"], in: node, path: path, log: &log)
    }

    /// SMS (and MMS), email and open channels: where their requests are POSTed.
    public static let webhookProvider = ObjectSchema("webhook", [
        SchemaProperty("url", .string(.constant), required: true),
        // The Standard Webhooks secret (`whsec_…`) requests are signed with, in a file.
        SchemaProperty("secret_file", .string(.constant)),
    ] + sendingProperties.filter { $0.name != "endpoint" }, refused: [
        "transport": "webhooks speak HTTP/1.1 and are always sent with libcurl (transport: is for apns, fcm, webpush and adm)",
        "proxy": "webhooks are sent with libcurl, which takes its proxy from the environment (HTTPS_PROXY, NO_PROXY)",
    ], rules: [webhookURLRule, sendingRule])

    static let webhookURLRule: SchemaRule = { node, path, log, _ in
        guard let url = node["url"], let text = url.stringValue else { return }
        if !text.hasPrefix("https://") || text.utf8.count <= 8 || text.utf8.contains(where: { $0 <= 0x20 || $0 == 0x22 || $0 == 0x5C || $0 >= 0x7F }) {
            log.error(path / "url", "expected an absolute https:// URL without spaces or quotes, found '\(text)'", at: url)
        } else if let segment = WireValue.dotSegment(inURL: text) {
            log.error(path / "url", "the path holds the segment '\(segment)', which names another folder: write the path it resolves to", at: url)
        }
    }

    public static let providers = ObjectSchema("providers", [
        SchemaProperty("apns", .object(apnsProvider)),
        SchemaProperty("fcm", .object(fcmProvider)),
        SchemaProperty("adm", .object(admProvider)),
        SchemaProperty("webpush", .object(webPushProvider)),
        SchemaProperty("sms", .object(webhookProvider)),
        SchemaProperty("email", .object(webhookProvider)),
    ], prefixed: [SchemaProperty(Platform.openPrefix, .object(webhookProvider))])

    public static let dryRun = ObjectSchema("dry_run", [
        SchemaProperty("gzip", .boolean),
    ])

    public static let pipeline = ObjectSchema("the pipeline", [
        // The default output folder is `out/<name>`: one path segment, so it stays inside `out/`.
        SchemaProperty("name", .string(.pathSegment), required: true),
        SchemaProperty("audience", .string(.constant)),
        SchemaProperty("personalization", .enumeration(["liquid", "handlebars"]), default: .string("liquid")),
        SchemaProperty("strict", .boolean),
        SchemaProperty("style", .enumeration(PayloadStyle.allCases.map(\.rawValue)), default: .string("airship")),
        SchemaProperty("device_types", .array(.string(.constant))),
        SchemaProperty("snippets", .stringMap()),
        SchemaProperty("notification", .object(NotificationSchema.notification), required: true),
        SchemaProperty("limits", .object(limits)),
        SchemaProperty("providers", .object(providers)),
        SchemaProperty("output", .string(.constant)),
        SchemaProperty("dry_run", .object(dryRun)),
        // Skip a device token seen earlier in the audience (docs/pipeline.md, "Dedupe").
        SchemaProperty("dedupe", .boolean, default: .bool(true)),
        // Defer recipients inside a daily window of their local time (docs/pipeline.md, "Quiet hours").
        SchemaProperty("quiet_hours", .object(QuietHoursSchema.object)),
        // A/B variants and a holdout (docs/pipeline.md, "Experiments").
        SchemaProperty("experiment", .object(ExperimentSchema.object)),
    ], rules: [deviceTypesRule])

    /// `device_types` entries: platform names or `open::<name>`.
    static let deviceTypesRule: SchemaRule = { node, path, log, _ in
        let names = Platform.allCases.filter { $0 != .open }.map(\.rawValue)
        for (i, entry) in (node["device_types"]?.sequenceElements ?? []).enumerated() {
            guard let text = entry.stringValue else { continue }
            if Platform.parse(deviceType: text) == nil {
                var message = "expected one of \(names.joined(separator: ", ")) or open::<name>, found '\(text)'"
                if text == "mms" {
                    message += " (MMS goes to sms devices: list sms and give an mms override)"
                } else if let guess = NameSuggestion.closest(to: text, in: names) {
                    message += " (did you mean '\(guess)'?)"
                }
                log.error((path / "device_types").appending(index: i), message, at: entry)
            }
        }
    }
}

/// How the payload is laid out for the app's SDK (reference/ has the vendors' documents).
public enum PayloadStyle: String, Sendable, CaseIterable {
    /// Airship: extras as top-level custom keys on iOS, `data` on Android.
    case airship
    case customerio
    case adobe
    case custom
}
