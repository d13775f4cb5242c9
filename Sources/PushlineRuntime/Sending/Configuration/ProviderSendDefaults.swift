public import PushlineCore
public import PushlineDelivery

/// What a sending provider uses where `providers.<apns|fcm|webpush|adm|channel>` leaves a setting out
/// (docs/pipeline.md lists them; the reasons are PROVIDERS.md's).
public enum ProviderSendDefaults {
    /// The reasons for each provider's values are on its profile (`APNsProfile`, `FCMProfile`, …).
    public static func connections(_ provider: Provider) -> Int { provider.profile.defaultConnections }

    public static func streams(_ provider: Provider) -> Int { provider.profile.defaultStreams }

    /// The burst is `SendRate`'s (a tenth of a second).
    public static func rateText(_ provider: Provider) -> String { provider.profile.defaultRate }

    public static let requestTimeout: Duration = .seconds(30)

    public static var retry: RetryPolicy { RetryPolicy() }
}
