public import PushlineCore
import PushlineDelivery

/// How `run` runs, from the pipeline and the flags:
///
/// - `--dry-run`: a dry run, whatever the credentials.
/// - credentials in `providers:` (APNs `key_file`, FCM `service_account`): sends, to every
///   provider the routes reach; each needs credentials (and a sender: APNs and FCM only), or the
///   run is refused like an invalid pipeline (`sendingProblems`, exit 2), before anything is read.
/// - no credentials: a dry run, as before sending existed, with one log line saying so.
/// - `--validate-only` (only when sending; with `--dry-run` or without credentials it is a usage
///   error): FCM requests carry `validate_only: true` (`apply(to:)` sets it before the encoder is
///   built); APNs has no such mode, so the sink skips APNs requests with `SkipReason.validateOnly`.
public struct RunDecision: Sendable {
    public var mode: RunMode
    /// The log line for a run that is a dry run only because no credentials are configured.
    public var notice: String?

    public struct Refusal: Error, Sendable, CustomStringConvertible {
        /// The pipeline cannot send as configured: diagnostics to print, exit 2.
        public var pipelineError: PipelineError?
        /// The flags do not fit the pipeline: one message, exit 64.
        public var usage: String?

        public var description: String { pipelineError?.description ?? usage ?? "" }
    }

    public static let noCredentialsNotice = "no provider credentials configured (providers.apns.key_file, providers.fcm.service_account, providers.webpush.vapid_private_key): this run is a dry run, nothing is sent"

    public init(pipeline: LoadedPipeline, dryRun: Bool, validateOnly: Bool) throws(Refusal) {
        if dryRun {
            if validateOnly { throw Refusal(usage: "--validate-only asks FCM to check the requests while sending; it cannot be combined with --dry-run") }
            self.init(mode: .dryRun, notice: nil)
            return
        }
        guard pipeline.delivery.hasCredentials else {
            if validateOnly {
                throw Refusal(usage: "--validate-only needs provider credentials (it sends to FCM with validate_only); \(pipeline.path) configures none")
            }
            self.init(mode: .dryRun, notice: Self.noCredentialsNotice)
            return
        }
        let configurations: [ProviderSendConfiguration]
        do {
            configurations = try DeliveryConfiguration.load(pipeline: pipeline)
        } catch {
            throw Refusal(pipelineError: error)
        }
        self.init(mode: .send(configurations, validateOnly: validateOnly), notice: nil)
    }

    public init(mode: RunMode, notice: String?) {
        self.mode = mode
        self.notice = notice
    }

    /// One log line per provider a sending run uses (ids and settings; never key material), and
    /// one for `--validate-only`. With the campaign's `routes`, each line ends with the engine
    /// that sends (`, with nghttp2`; docs/delivery.md, "Choosing the engine"), the environment's
    /// proxy variables read from `environment` (nil: the process's). With a `shard` of several,
    /// each rate is the one this process sends at (`mode.sharded(shard)`: its share of the
    /// configured rate, which the line names too), not the campaign's.
    public func describeProviders(routes: RouteTable? = nil, environment: [String: String]? = nil, shard: AudienceShard? = nil) -> [String] {
        guard case .send(let configurations, let validateOnly) = mode else { return [] }
        var shares = configurations
        if let shard, case .send(let sharded, _) = mode.sharded(shard) { shares = sharded }
        let share = shard.flatMap { $0.count > 1 ? $0 : nil }
        var lines = zip(configurations, shares).map { configuration, sent -> String in
            describe(sent, configured: configuration, shard: share)
                + (routes.map { ", with " + ProviderSenders.engineSummary(configuration, routes: $0, environment: environment) } ?? "")
        }
        if validateOnly {
            lines.append("--validate-only: FCM requests carry validate_only (checked, not delivered); APNs devices are skipped (validate_only)")
        }
        return lines
    }

    /// `rate 100/s (burst 10)`; for a shard, `rate 100/s (burst 10), shard 3/8's share of 800/s (burst 80)`.
    private static func rate(_ sent: SendRate, configured: SendRate, shard: AudienceShard?) -> String {
        guard let shard else { return "rate \(sent)" }
        return "rate \(sent), shard \(shard)'s share of \(configured)"
    }

    /// `configuration` as sent (`sent`: a shard's rates), beside what the pipeline configured.
    private func describe(_ configuration: ProviderSendConfiguration, configured: ProviderSendConfiguration, shard: AudienceShard?) -> String {
        let settings = configuration.settings
        let rate = Self.rate(settings.rate, configured: configured.settings.rate, shard: shard)
        let identity = switch configuration.credentials {
        case .apns(let key): "team_id \(key.teamID), key_id \(key.keyID)"
        case .fcm(let account): "project \(account.projectID), client_email \(account.clientEmail)"
        case .webpush(let key): "VAPID public key \(key.publicKeyText.prefix(16))…, subject \(key.subject)"
        case .adm(let client): "client_id \(client.clientID), token_uri \(client.tokenEndpoint.uri)"
        case .webhooks(let channels): channels.map { "\($0.name) signing key \($0.key.fingerprint)…" }.joined(separator: ", ")
        }
        if case .webhooks(let channels) = configuration.credentials {
            let configuredChannels: [WebhookChannel]
            if case .webhooks(let written) = configured.credentials { configuredChannels = written } else { configuredChannels = channels }
            return "sending to webhooks (\(identity)): " + zip(channels, configuredChannels).map { channel, written in
                "\(channel.name) \(channel.settings.connections) connections × \(channel.settings.streamsPerConnection) streams, \(Self.rate(channel.settings.rate, configured: written.settings.rate, shard: shard))"
            }.joined(separator: "; ")
        }
        if configuration.provider == .webpush {
            return "sending to webpush (\(identity)): per push service \(settings.connections) connections × \(settings.streamsPerConnection) streams, \(rate); at most \(settings.pushServices) push services\(settings.allowPrivateEndpoints ? "; private endpoints allowed" : "")"
        }
        return "sending to \(configuration.provider.rawValue) at \(settings.endpoint ?? "the provider's host") (\(identity)): \(settings.connections) connections × \(settings.streamsPerConnection) streams, \(rate)"
    }

    /// Readies the campaign for the mode: FCM bodies with `validate_only` before the encoder is made.
    public func apply(to pipeline: inout LoadedPipeline) {
        if case .send(_, let validateOnly) = mode {
            pipeline.campaign.fcmValidateOnly = validateOnly
        }
    }
}
