import PushlineCore

/// The pipeline file's top level (docs/pipeline.md documents each key).
public enum PipelineSchema {
    public static let limits = ObjectSchema("limits", [
        SchemaProperty("on_oversize", .enumeration(["reject", "truncate"])),
        SchemaProperty("max_line_bytes", .integer(1024...(64 << 20))),
        SchemaProperty("max_field_bytes", .integer(16...(1 << 20))),
        SchemaProperty("require_https_urls", .boolean),
    ])

    public static let apnsProvider = ObjectSchema("providers.apns", [
        SchemaProperty("topic", .string(.constant), required: true),
        SchemaProperty("environment", .enumeration(APNsEnvironment.allCases.map(\.rawValue))),
        SchemaProperty("team_id", .string(.constant)),
        SchemaProperty("key_id", .string(.constant)),
        SchemaProperty("key_file", .string(.constant)),
        SchemaProperty("rate", .string(.constant)),
    ])

    public static let fcmProvider = ObjectSchema("providers.fcm", [
        SchemaProperty("project_id", .string(.constant), required: true),
        SchemaProperty("service_account", .string(.constant)),
        SchemaProperty("rate", .string(.constant)),
    ])

    public static let providers = ObjectSchema("providers", [
        SchemaProperty("apns", .object(apnsProvider)),
        SchemaProperty("fcm", .object(fcmProvider)),
    ])

    public static let dryRun = ObjectSchema("dry_run", [
        SchemaProperty("gzip", .boolean),
    ])

    public static let pipeline = ObjectSchema("the pipeline", [
        SchemaProperty("name", .string(.constant), required: true),
        SchemaProperty("audience", .string(.constant)),
        SchemaProperty("personalization", .enumeration(["liquid", "handlebars"])),
        SchemaProperty("strict", .boolean),
        SchemaProperty("style", .enumeration(PayloadStyle.allCases.map(\.rawValue))),
        SchemaProperty("device_types", .array(.enumeration(Platform.allCases.map(\.rawValue)))),
        SchemaProperty("snippets", .stringMap()),
        SchemaProperty("notification", .object(NotificationSchema.notification), required: true),
        SchemaProperty("limits", .object(limits)),
        SchemaProperty("providers", .object(providers)),
        SchemaProperty("output", .string(.constant)),
        SchemaProperty("dry_run", .object(dryRun)),
    ])
}

/// How the payload is laid out for the app's SDK (reference/ has the vendors' documents).
public enum PayloadStyle: String, Sendable, CaseIterable {
    /// Airship: extras as top-level custom keys on iOS, `data` on Android.
    case airship
    case customerio
    case adobe
    case custom
}
