public import PushlineCore
public import PushlineDelivery
import PushlineEncoding

/// The sending side of a pipeline: the credentials and lane settings of every provider whose
/// credentials `providers:` gives (loaded and checked when the pipeline is loaded, before anything
/// is read), and what would stop the campaign from sending as configured.
public struct DeliveryConfiguration: Sendable {
    /// One per provider with credentials (APNs: team_id, key_id, key_file; FCM: service_account;
    /// Web Push: vapid_private_key and subject; ADM: client_id and client secret; webhooks: one
    /// for every channel with a secret_file),
    /// in provider order, whether the campaign's routes reach it or not.
    public var configured: [ProviderSendConfiguration]
    /// Why the campaign cannot send as configured: a route to a provider (or webhook channel)
    /// without credentials. Errors for `validate` and a sending `run`; a dry run ignores them.
    public var sendingProblems: [ConfigDiagnostic]

    public init(configured: [ProviderSendConfiguration] = [], sendingProblems: [ConfigDiagnostic] = []) {
        self.configured = configured
        self.sendingProblems = sendingProblems
    }

    /// Whether the pipeline names credentials: then `run` sends unless `--dry-run` is given.
    public var hasCredentials: Bool { !configured.isEmpty }

    /// The configurations a sending run uses: one per provider the campaign's routes reach.
    /// Throws the sending problems (as `validate` prints them) when there are any.
    public static func load(pipeline: LoadedPipeline) throws(PipelineError) -> [ProviderSendConfiguration] {
        let delivery = pipeline.delivery
        if !delivery.sendingProblems.isEmpty {
            throw PipelineError(path: pipeline.path, diagnostics: delivery.sendingProblems)
        }
        let reached = Set(pipeline.campaign.routeTable.providers)
        return delivery.configured.filter { reached.contains($0.provider) }
    }

    /// Which engine sends each of `configurations` (`apns`, `nghttp2`; `fcm`, `libcurl (transport:
    /// curl)`), as `validate` and the run's start say it: the environment's proxy variables are
    /// read here as the senders will read them (docs/delivery.md, "Choosing the engine").
    public static func engines(
        _ configurations: [ProviderSendConfiguration], routes: RouteTable,
        environment: [String: String]? = nil
    ) -> [(provider: String, engine: String)] {
        configurations.map { ($0.provider.rawValue, ProviderSenders.engineSummary($0, routes: routes, environment: environment)) }
    }

    /// For each provider the routes reach: credentials to send with (for webhooks, a signing
    /// secret for each channel reached).
    static func sendingProblems(campaign: Campaign, root: ConfigNode, configured: [ProviderSendConfiguration]) -> [ConfigDiagnostic] {
        var log = DiagnosticLog()
        let providers = root["providers"]
        let table = campaign.routeTable
        let configuredProviders = Set(configured.map(\.provider))
        var channels: Set<String> = []
        for configuration in configured {
            if case .webhooks(let list) = configuration.credentials { channels.formUnion(list.map(\.name)) }
        }
        for provider in table.providers.sorted() {
            var platforms: [String] = []
            for route in table.routes where route.provider == provider && !platforms.contains(route.platformName) {
                platforms.append(route.platformName)
            }
            let devices = "\(platforms.joined(separator: ", ")) devices"
            if provider == .webhook {
                for channel in platforms where !channels.contains(channel) {
                    let node = providers?[channel]
                    log.error(ConfigPath("providers") / channel / "secret_file", "is required to send: \(channel) devices go to the webhook at providers.\(channel).url, and every request is signed (Standard Webhooks); add a file holding the whsec_ secret the receiver verifies with (or run with --dry-run)", at: node ?? providers ?? root)
                }
                continue
            }
            guard !configuredProviders.contains(provider) else { continue }
            switch provider {
            case .apns:
                log.error(ConfigPath("providers.apns.key_file"), "is required to send: \(devices) go to APNs; add team_id, key_id and key_file to providers.apns (or run with --dry-run)", at: providers?["apns"] ?? providers ?? root)
            case .fcm:
                log.error(ConfigPath("providers.fcm.service_account"), "is required to send: \(devices) go to FCM; add the service account JSON file to providers.fcm (or run with --dry-run)", at: providers?["fcm"] ?? providers ?? root)
            case .webpush:
                log.error(ConfigPath("providers.webpush.vapid_private_key"), "is required to send: \(devices) go to Web Push; add vapid_private_key (the key the site's subscriptions were made with) and subject to providers.webpush (or run with --dry-run)", at: providers?["webpush"] ?? providers ?? root)
            case .adm:
                log.error(ConfigPath("providers.adm.client_id"), "is required to send: \(devices) go to ADM; add client_id and client_secret_file (the app's security profile) to providers.adm (or run with --dry-run)", at: providers?["adm"] ?? providers ?? root)
            case .webhook:
                break
            }
        }
        return log.diagnostics
    }

    static func name(of provider: Provider) -> String {
        switch provider {
        case .apns: "APNs"
        case .fcm: "FCM"
        case .webpush: "Web Push"
        case .adm: "ADM"
        case .webhook: "webhooks"
        }
    }
}
