public import PushlineCore
public import PushlineIO

/// Makes realistic synthetic audiences for demos, tests and benchmarks: customers with non-ASCII
/// names in many scripts, one to three devices across platforms and providers, and optionally
/// personalized values full of JSON-hostile text.
public struct AudienceGenerator: Sendable {
    public var seed: UInt64
    /// Share of customers (0…1) whose `first_name` and `event_title` are hostile strings.
    public var hostileFraction: Double
    /// Subscriptions web devices use in turn (the first web device the first one, …) instead
    /// of made-up ones: an emulator's, so that a staged send can be decrypted. Empty: made up.
    public var webPushSubscriptions: [WebPushSubscriptionList.Subscription]

    public init(seed: UInt64 = 42, hostileFraction: Double = 0, webPushSubscriptions: [WebPushSubscriptionList.Subscription] = []) {
        self.seed = seed
        self.hostileFraction = hostileFraction
        self.webPushSubscriptions = webPushSubscriptions
    }

    /// Writes `count` customers to `path` (gzip when it ends in `.gz`). Returns the device count.
    public func write(count: Int, to path: String) throws(OutputFileError) -> Int {
        var file = try OutputFile(path: path, options: .init(compression: path.hasSuffix(".gz") ? .gzip(level: 6) : .none))
        var rng = SplitMix64(seed: seed)
        var writer = JSONWriter(reservingCapacity: 1 << 20)
        var devices = 0
        var webDevices = 0
        for index in 1...max(1, count) {
            devices += appendCustomer(index, rng: &rng, webDevices: &webDevices, into: &writer)
            if writer.count >= 1 << 20 {
                try file.write(writer.bytes)
                writer.removeAll()
            }
        }
        try file.write(writer.bytes)
        try file.close()
        return devices
    }

    /// Appends one customer line (with its newline); returns its device count. Its web devices
    /// start again at the first of `webPushSubscriptions`.
    public func appendCustomer(_ index: Int, rng: inout SplitMix64, into w: inout JSONWriter) -> Int {
        var webDevices = 0
        return appendCustomer(index, rng: &rng, webDevices: &webDevices, into: &w)
    }

    /// The same, counting web devices in `webDevices`: the count picks the next of
    /// `webPushSubscriptions`, so a whole audience uses them round-robin.
    public func appendCustomer(_ index: Int, rng: inout SplitMix64, webDevices: inout Int, into w: inout JSONWriter) -> Int {
        let hostile = hostileFraction > 0 && rng.nextDouble() < hostileFraction
        w.beginObject()
        w.writeKey("id")
        w.writeString("c-\(index)")
        w.writeKey("customer")
        w.beginObject()
        w.writeKey("first_name")
        w.writeString(hostile ? Self.hostileText(&rng) : Self.firstNames[rng.next(Self.firstNames.count)])
        w.writeKey("last_name")
        w.writeString(Self.lastNames[rng.next(Self.lastNames.count)])
        w.writeKey("points")
        w.writeInt(rng.next(5000))
        w.writeKey("unread")
        w.writeInt(rng.next(10))
        w.writeKey("tier")
        w.writeString(Self.tiers[rng.next(Self.tiers.count)])
        w.writeKey("locale")
        w.writeString(Self.locales[rng.next(Self.locales.count)])
        w.endObject()
        w.writeKey("event")
        w.beginObject()
        w.writeKey("event_title")
        w.writeString(hostile ? Self.hostileText(&rng) : Self.events[rng.next(Self.events.count)])
        w.writeKey("city")
        w.writeString(Self.cities[rng.next(Self.cities.count)])
        w.endObject()
        w.writeKey("devices")
        w.beginArray()
        let deviceCount = 1 + rng.next(3)
        for _ in 0..<deviceCount { appendDevice(&rng, webDevices: &webDevices, into: &w) }
        w.endArray()
        w.endObject()
        w.appendRaw(byte: 0x0A)
        w.resetSeparator()
        return deviceCount
    }

    func appendDevice(_ rng: inout SplitMix64, webDevices: inout Int, into w: inout JSONWriter) {
        w.beginObject()
        let roll = rng.next(100)
        switch roll {
        case 0..<45:
            w.writeKey("platform"); w.writeString("ios")
            if rng.next(5) == 0 {
                w.writeKey("provider"); w.writeString("fcm")
                w.writeKey("token"); w.writeString(Self.fcmToken(&rng))
            } else {
                w.writeKey("provider"); w.writeString("apns")
                w.writeKey("token"); w.writeString(Self.randomString(&rng, Self.hex, 64))
            }
            if rng.next(3) == 0 { w.writeKey("badge"); w.writeInt(rng.next(6)) }
        case 45..<85:
            w.writeKey("platform"); w.writeString("android")
            w.writeKey("token"); w.writeString(Self.fcmToken(&rng))
        case 85..<95:
            w.writeKey("platform"); w.writeString("web")
            // Made up first in any case: the random stream, and so every other customer, stays
            // the same with or without real subscriptions.
            var subscription = WebPushSubscriptionList.Subscription(
                endpoint: (rng.next(2) == 0 ? "https://fcm.googleapis.com/fcm/send/" : "https://updates.push.services.mozilla.com/wpush/v2/") + Self.randomString(&rng, Self.base64url, 120),
                p256dh: "B" + Self.randomString(&rng, Self.base64url, 86),
                auth: Self.randomString(&rng, Self.base64url, 22)
            )
            if !webPushSubscriptions.isEmpty {
                subscription = webPushSubscriptions[webDevices % webPushSubscriptions.count]
            }
            webDevices += 1
            w.writeKey("subscription")
            w.beginObject()
            w.writeKey("endpoint"); w.writeString(subscription.endpoint)
            w.writeKey("keys")
            w.beginObject()
            w.writeKey("p256dh"); w.writeString(subscription.p256dh)
            w.writeKey("auth"); w.writeString(subscription.auth)
            w.endObject()
            w.endObject()
        default:
            w.writeKey("platform"); w.writeString("amazon")
            w.writeKey("token"); w.writeString("amzn1.adm-registration.v3." + Self.randomString(&rng, Self.alphanumeric, 140))
        }
        w.endObject()
    }

    static func fcmToken(_ rng: inout SplitMix64) -> String {
        randomString(&rng, base64url, 22) + ":APA91b" + randomString(&rng, base64url, 134)
    }

    static func randomString(_ rng: inout SplitMix64, _ alphabet: [Character], _ count: Int) -> String {
        var s = ""
        s.reserveCapacity(count)
        for _ in 0..<count { s.append(alphabet[rng.next(alphabet.count)]) }
        return s
    }

    /// Two to six fragments chosen to break naive JSON, template and terminal handling.
    static func hostileText(_ rng: inout SplitMix64) -> String {
        var s = ""
        for _ in 0..<(2 + rng.next(5)) { s += hostileFragments[rng.next(hostileFragments.count)] }
        return s
    }

    static let hex = Array("0123456789abcdef")
    static let base64url = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
    static let alphanumeric = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
    static let firstNames = [
        "Ana", "José", "Zoë", "Łukasz", "Søren", "Chloé", "Mário", "Björk", "Ñuño", "François", "Jean-Luc", "O'Brien",
        "Иван", "Ольга", "王芳", "李雷", "さくら", "太郎", "민준", "지우", "محمد", "فاطمة", "Αλέξανδρος", "Δήμητρα",
        "अर्जुन", "प्रिया", "Nguyễn", "Thảo", "Ömer", "Ayşe", "Siobhán", "Nomvula", "Kwame", "Mia", "Noah", "Liam",
    ]
    static let lastNames = ["Silva", "Müller", "García", "Nowak", "Andersen", "Dubois", "Rossi", "Kowalski", "Ivanova", "Tanaka", "Kim", "Haddad", "Papadopoulos", "Sharma", "Trần", "Yılmaz"]
    static let tiers = ["bronze", "silver", "gold", "platinum"]
    static let locales = ["pt-PT", "en-US", "de-DE", "fr-FR", "ja-JP", "ko-KR", "ar-EG", "el-GR", "hi-IN", "vi-VN", "tr-TR"]
    static let events = ["Lisbon trip", "Tokyo getaway", "Weekend in Paris", "Cart: 3 items", "Concert tickets 🎫", "Spa day", "São Paulo flight", "Ski week in Zürich", "Dinner for two", "Museum pass"]
    static let cities = ["Lisboa", "Tōkyō", "Paris", "São Paulo", "Zürich", "Kraków", "Москва", "القاهرة", "서울", "Αθήνα"]
    static let hostileFragments: [String] = [
        "\"", "\\", "\\\"", "\"quoted\"", "\u{0}", "\u{1}", "\u{8}", "\u{9}", "\u{A}", "\u{C}", "\u{D}", "\u{1B}[31m", "\u{1F}",
        "\u{7F}", "\u{2028}", "\u{2029}", "\u{FEFF}", "\u{202E}evil", "e\u{301}", "👩‍👩‍👧‍👦", "🇵🇹", "💩", "𝄞",
        "{{ customer.secret }}", "{% if true %}x{% endif %}", "<script>alert(1)</script>", "&amp;", "</b>", "%s%n",
        "' OR 1=1 --", "\\u0000", "\\ud800", "Ана", "名前", " ", "  trailing  ",
    ]
}
