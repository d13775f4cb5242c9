public import PushlineCore
public import PushlineDelivery

/// What a sending provider uses where `providers.<apns|fcm|webpush|adm|channel>` leaves a setting out
/// (docs/pipeline.md lists them; the reasons are PROVIDERS.md's).
public enum ProviderSendDefaults {
    /// APNs treats connection churn as abuse and gives each connection hundreds of streams:
    /// two long-lived connections. FCM allows about 100 streams per connection, and 10,000/s at a
    /// 100 ms round trip keeps about 1,000 requests in flight: ten connections.
    /// Web Push: per push service; two connections of 100 streams carry a few thousand a second.
    /// ADM may answer over HTTP/1.1 (one request per connection at a time): ten. Webhooks: per
    /// channel; a receiver is one service of the customer's: four.
    public static func connections(_ provider: Provider) -> Int {
        switch provider {
        case .apns, .webpush: 2
        case .webhook: 4
        default: 10
        }
    }

    /// APNs announces 500 to 1,500 concurrent streams once a token is accepted (the lowest seen is
    /// taken; libcurl uses the lower of this and the server's own); FCM about 100.
    public static func streams(_ provider: Provider) -> Int {
        provider == .apns ? 500 : 100
    }

    /// FCM: the default project quota, 600,000 a minute. APNs publishes no quota: 10,000/s, which
    /// adaptive slowdown lowers on TooManyRequests. The burst is `SendRate`'s (a tenth of a second).
    /// Web Push services publish no rate: 1,000/s per push service, which adaptive slowdown
    /// lowers on 429. ADM publishes no rate either: 1,000/s, lowered on MaxRateExceeded.
    /// Webhooks: 500/s per channel, an SMS or email gateway's order of magnitude; set the
    /// gateway's own.
    public static func rateText(_ provider: Provider) -> String {
        switch provider {
        case .apns: "10000/s"
        case .webpush, .adm: "1000/s"
        case .webhook: "500/s"
        case .fcm: "600000/min"
        }
    }

    public static let requestTimeout: Duration = .seconds(30)

    public static var retry: RetryPolicy { RetryPolicy() }
}
