import PushlineCore
import PushlineDelivery
import PushlineEncoding
import PushlineIO
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads `providers.apns`, `fcm`, `webpush`, `adm` and the webhook channels (`sms`, `email`,
/// `open::<name>`) into `ProviderSendConfiguration`s: loads the key files (`APNsSigningKey.load`,
/// `FCMServiceAccount.load`, `VAPIDKey.load`, the ADM client secret, the webhook secrets) and
/// checks `ca_file`, `rate` and the FCM project, each problem a diagnostic at its value (naming the file and the key path, never
/// key material). Values the schema refuses (wrong kind, empty, templated, a bad endpoint) are
/// skipped here: the schema reports them, once.
struct DeliveryConfigurationReader {
    /// Relative files are taken from here (the pipeline file's folder; empty: the current one).
    var folder: String
    /// Paths whose `${VAR}` expansion failed: already reported.
    var skipped: Set<String>

    struct Result {
        var configured: [ProviderSendConfiguration] = []
        /// The service account's project, for FCM URLs when `project_id` is left out.
        var serviceAccountProject: String?
        var log = DiagnosticLog()
        /// Paths whose compile diagnostics would repeat a problem reported here (a project_id
        /// "required" while the service account that would give it failed to load).
        var reportedPaths: Set<String> = []
    }

    /// A CA file is a few kilobytes; a bundle of every public root is about 200 KB.
    static let caFileLimit = 1 << 20

    func read(_ root: ConfigNode) -> Result {
        var result = Result()
        guard let providers = root["providers"] else { return result }
        let base = ConfigPath("providers")
        if let node = providers["apns"], node.mappingEntries != nil {
            let path = base / "apns"
            let settings = readSettings(node, provider: .apns, path: path, log: &result.log)
            if let key = loadAPNsKey(node, path: path, log: &result.log), let settings {
                result.configured.append(ProviderSendConfiguration(provider: .apns, credentials: .apns(key), settings: settings))
            }
        }
        if let node = providers["fcm"], node.mappingEntries != nil {
            let path = base / "fcm"
            let settings = readSettings(node, provider: .fcm, path: path, log: &result.log)
            let account = loadServiceAccount(node, path: path, log: &result.log)
            if account == nil && node["service_account"] != nil && node["project_id"] == nil {
                result.reportedPaths.insert((path / "project_id").description)
            }
            if let account {
                result.serviceAccountProject = account.projectID
                if let value = node["project_id"], let given = value.stringValue, !skipped.contains((path / "project_id").description), given != account.projectID {
                    result.log.error(path / "project_id", "is '\(PrintableName.bounded(given, limit: 200))' but the service account file is for project '\(account.projectID)': leave project_id out (the file's is used) or make them agree", at: value)
                } else if let settings {
                    result.configured.append(ProviderSendConfiguration(provider: .fcm, credentials: .fcm(account), settings: settings))
                }
            }
        }
        if let node = providers["webpush"], node.mappingEntries != nil {
            let path = base / "webpush"
            var settings = readSettings(node, provider: .webpush, path: path, log: &result.log)
            if let key = loadVAPIDKey(node, path: path, log: &result.log), var given = settings {
                given.allowPrivateEndpoints = node["allow_private_endpoints"]?.boolValue ?? false
                if let count = node["push_services"]?.intValue { given.pushServices = count }
                settings = given
                result.configured.append(ProviderSendConfiguration(provider: .webpush, credentials: .webpush(key), settings: given))
            }
        }
        if let node = providers["adm"], node.mappingEntries != nil {
            let path = base / "adm"
            let settings = readSettings(node, provider: .adm, path: path, log: &result.log)
            if let client = loadADMClient(node, path: path, log: &result.log), let settings {
                result.configured.append(ProviderSendConfiguration(provider: .adm, credentials: .adm(client), settings: settings))
            }
        }
        var channels: [WebhookChannel] = []
        for (name, node) in providers.mappingEntries ?? [] where Self.isWebhookChannel(name) && node.mappingEntries != nil {
            let path = base / name
            let settings = readSettings(node, provider: .webhook, path: path, log: &result.log)
            guard let file = usable(node, "secret_file", path: path) else { continue }
            do throws(WebhookSigningKey.Invalid) {
                let key = try WebhookSigningKey.load(path: resolve(file.text))
                if let settings { channels.append(WebhookChannel(name: name, key: key, settings: settings)) }
            } catch {
                result.log.error(path / "secret_file", error.description, at: file.node)
            }
        }
        if let first = channels.first {
            result.configured.append(ProviderSendConfiguration(provider: .webhook, credentials: .webhooks(channels), settings: first.settings))
        }
        return result
    }

    /// `sms`, `email` and `open::<name>`: the `providers:` keys whose blocks are webhooks.
    static func isWebhookChannel(_ key: String) -> Bool {
        key == "sms" || key == "email" || key.hasPrefix(Platform.openPrefix)
    }

    func loadADMClient(_ node: ConfigNode, path: ConfigPath, log: inout DiagnosticLog) -> ADMClientCredentials? {
        guard let id = usable(node, "client_id", path: path) else { return nil }
        let tokenURI = usable(node, "token_uri", path: path)
        if node["token_uri"] != nil, tokenURI == nil { return nil }
        do throws(OAuthError) {
            let client: ADMClientCredentials
            if let file = usable(node, "client_secret_file", path: path) {
                client = try ADMClientCredentials.load(clientID: id.text, secretFile: resolve(file.text), tokenURI: tokenURI?.text ?? ADMClientCredentials.defaultTokenURI)
            } else if let secret = usable(node, "client_secret", path: path) {
                client = try ADMClientCredentials(clientID: id.text, clientSecret: secret.text, tokenURI: tokenURI?.text ?? ADMClientCredentials.defaultTokenURI)
            } else {
                return nil
            }
            // As for FCM: the sender exchanges tokens over HTTPS only.
            guard client.tokenEndpoint.isTLS else {
                log.error(path / "token_uri", "'\(PrintableName.bounded(client.tokenEndpoint.uri, limit: 200))' is plain http://: the sender exchanges tokens over HTTPS only", at: tokenURI?.node ?? node)
                return nil
            }
            return client
        } catch {
            let key = node["client_secret_file"] != nil ? "client_secret_file" : "client_id"
            log.error(path / key, error.description, at: node[key] ?? node)
            return nil
        }
    }

    func loadVAPIDKey(_ node: ConfigNode, path: ConfigPath, log: inout DiagnosticLog) -> VAPIDKey? {
        guard let file = usable(node, "vapid_private_key", path: path) else { return nil }
        // The subject's shape is the schema's to report; the file is still checked with a
        // stand-in so one `validate` lists both.
        var subject: String?
        if let given = usable(node, "subject", path: path)?.text, VAPIDKey.subjectProblem(given) == nil { subject = given }
        do throws(VAPIDError) {
            let key = try VAPIDKey.load(file: resolve(file.text), subject: subject ?? "mailto:stand-in@pushline.invalid")
            return subject == nil ? nil : key
        } catch {
            log.error(path / "vapid_private_key", error.description, at: file.node)
            return nil
        }
    }

    /// A string value the schema accepts and whose expansion worked, else nil.
    func usable(_ node: ConfigNode, _ key: String, path: ConfigPath) -> (text: String, node: ConfigNode)? {
        guard let value = node[key], let text = value.stringValue, !text.isEmpty, !isTemplated(text),
              !skipped.contains((path / key).description)
        else { return nil }
        return (text, value)
    }

    /// `path` relative to the pipeline file's folder, like `audience`.
    func resolve(_ file: String) -> String {
        file.hasPrefix("/") || folder.isEmpty ? file : folder + "/" + file
    }

    func loadAPNsKey(_ node: ConfigNode, path: ConfigPath, log: inout DiagnosticLog) -> APNsSigningKey? {
        guard let file = usable(node, "key_file", path: path) else { return nil }
        // The ids' shape is the schema's to report; the file is still checked with stand-ins so
        // one `validate` lists a bad id and a bad key file together.
        var ids: (team: String, key: String)?
        if let team = usable(node, "team_id", path: path)?.text, let key = usable(node, "key_id", path: path)?.text,
           Self.isIdentifier(team), Self.isIdentifier(key) {
            ids = (team, key)
        }
        do {
            let key = try APNsSigningKey.load(keyFile: resolve(file.text), keyID: ids?.key ?? "KEYID00000", teamID: ids?.team ?? "TEAMID0000")
            return ids == nil ? nil : key
        } catch {
            log.error(path / "key_file", error.description, at: file.node)
            return nil
        }
    }

    func loadServiceAccount(_ node: ConfigNode, path: ConfigPath, log: inout DiagnosticLog) -> FCMServiceAccount? {
        guard let file = usable(node, "service_account", path: path) else { return nil }
        do {
            let account = try FCMServiceAccount.load(path: resolve(file.text))
            // The loader takes http:// on loopback (tests of the token exchange); the sender speaks
            // HTTP/2 over TLS only, so a sending configuration cannot use it.
            guard account.tokenEndpoint.isTLS else {
                log.error(path / "service_account", "the service account's token_uri '\(PrintableName.bounded(account.tokenEndpoint.uri, limit: 200))' is plain http://: the sender exchanges tokens over HTTPS only (the emulator serves https://…/token)", at: file.node)
                return nil
            }
            return account
        } catch {
            log.error(path / "service_account", error.description, at: file.node)
            return nil
        }
    }

    /// The lane settings, defaults filled in; nil when one of them is wrong (reported here or by
    /// the schema).
    func readSettings(_ node: ConfigNode, provider: Provider, path: ConfigPath, log: inout DiagnosticLog) -> SenderSettings? {
        var valid = true
        var endpoint: String?
        if let value = node["endpoint"] {
            if let text = value.stringValue, case .success(let origin) = ProviderEndpoint.origin(text) { endpoint = origin } else { valid = false }
        }
        var caFile: String?
        if node["ca_file"] != nil {
            if let file = usable(node, "ca_file", path: path) {
                let resolved = resolve(file.text)
                caFile = resolved
                if let problem = Self.caFileProblem(resolved) {
                    log.error(path / "ca_file", "'\(PrintableName.bounded(resolved, limit: 512))' \(problem)", at: file.node)
                    valid = false
                }
            } else {
                valid = false
            }
        }
        func integer(_ key: String, _ range: ClosedRange<Int>, default value: Int) -> Int {
            guard let node = node[key] else { return value }
            guard let given = node.intValue, range.contains(given) else {
                valid = false
                return value
            }
            return given
        }
        let connections = integer("connections", PipelineSchema.sendingConnections, default: ProviderSendDefaults.connections(provider))
        let streams = integer("streams", PipelineSchema.sendingStreams, default: ProviderSendDefaults.streams(provider))
        let threads = integer("transfer_threads", SendingLimits.transferThreads, default: 1)
        if threads > connections, let threadsNode = node["transfer_threads"] {
            log.error(path / "transfer_threads", "each transfer thread needs a connection of its own: \(threads) threads, \(connections) connections", at: threadsNode)
            valid = false
        }
        let burst: Int? = node["burst"] == nil ? nil : integer("burst", 1...SendRate.maximumBurst, default: 1)
        var rateText = ProviderSendDefaults.rateText(provider)
        var rateNode: ConfigNode?
        if node["rate"] != nil {
            if let given = usable(node, "rate", path: path) {
                rateText = given.text
                rateNode = given.node
            } else {
                valid = false
            }
        }
        var rate: SendRate?
        do {
            rate = try SendRate(parsing: rateText, burst: burst)
        } catch {
            log.error(path / "rate", error.description, at: rateNode ?? node)
            valid = false
        }
        // The engine and proxy (not for webhooks: HTTP/1.1, always libcurl; the schema refuses
        // the keys there). Their problems are the schema's to report.
        var transport = TransportEngine.nghttp2
        var proxy: String?
        if provider != .webhook {
            if let value = node["transport"] {
                if let text = value.stringValue, let given = TransportEngine(rawValue: text) { transport = given } else { valid = false }
            }
            if node["proxy"] != nil {
                if let given = usable(node, "proxy", path: path), case .success(let url) = ProviderProxy.url(given.text) { proxy = url } else { valid = false }
                if node["transport"]?.stringValue == TransportEngine.nghttp2.rawValue { valid = false }
            }
        }
        guard valid, let rate else { return nil }
        var settings = SenderSettings(
            endpoint: endpoint, caFile: caFile, connections: connections, streamsPerConnection: streams,
            rate: rate, requestTimeout: ProviderSendDefaults.requestTimeout, retry: ProviderSendDefaults.retry,
            transferThreads: threads
        )
        settings.transport = transport
        settings.proxy = proxy
        return settings
    }

    /// The CA file must be there and hold a PEM certificate: found now, not at the first request.
    static func caFileProblem(_ path: String) -> String? {
        // A FIFO or a device would block or never end: only a regular file is opened.
        var info = stat()
        if stat(path, &info) != 0 {
            return errno == ENOENT || errno == ENOTDIR ? "does not exist" : "cannot be read: \(String(cString: strerror(errno)))"
        }
        if (info.st_mode & S_IFMT) != S_IFREG { return "is not a regular file" }
        let bytes: [UInt8]
        do {
            bytes = try BoundedFile.read(path, limit: caFileLimit)
        } catch {
            if case .tooLarge = error.reason { return "is larger than \(caFileLimit) bytes, too large for a CA file" }
            return "cannot be read: \(error.message)"
        }
        let marker = Array("-----BEGIN CERTIFICATE-----".utf8)
        guard bytes.count >= marker.count, (0...(bytes.count - marker.count)).contains(where: { bytes[$0..<($0 + marker.count)].elementsEqual(marker) }) else {
            return "holds no PEM certificate (-----BEGIN CERTIFICATE-----)"
        }
        return nil
    }

    static func isIdentifier(_ text: String) -> Bool {
        let bytes = text.utf8
        return (1...64).contains(bytes.count) && bytes.allSatisfy {
            (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0)
        }
    }
}
