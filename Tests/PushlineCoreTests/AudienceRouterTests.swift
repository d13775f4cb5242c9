import PushlineCore
import Testing

@Suite("Audience routing")
struct AudienceRouterTests {
    static let apnsToken = String(repeating: "ab12", count: 16)   // 64 hex digits
    static let fcmToken = "dXyzABCDEFGHIJKLMNOPQR:APA91b" + String(repeating: "x_-9", count: 33)

    func route(_ line: String) throws -> Result<AudienceRecord, RejectReason> {
        AudienceRouter.route(try JSONDocument(parsing: line).root)
    }

    func routes(_ line: String) throws -> [DeviceRoute] {
        switch try route(line) {
        case .success(let record): return record.routes
        case .failure(let reason): Issue.record("line rejected: \(reason)"); return []
        }
    }

    @Test func infersProviderFromPlatform() throws {
        let line = #"{"id":"c-1","devices":[{"platform":"ios","token":"\#(Self.apnsToken)"},{"platform":"android","token":"\#(Self.fcmToken)"}]}"#
        let result = try routes(line)
        #expect(result.count == 2)
        guard case .routed(let ios) = result[0], case .routed(let android) = result[1] else {
            Issue.record("expected two routed devices, got \(result)")
            return
        }
        #expect(ios.provider == .apns && ios.platform == .ios && ios.index == 0)
        #expect(android.provider == .fcm && android.platform == .android && android.index == 1)
        #expect(ios.address.stringValue == Self.apnsToken)
    }

    @Test func iosThroughFCMWhenNamed() throws {
        let result = try routes(#"{"id":"c-1","devices":[{"platform":"ios","provider":"fcm","token":"\#(Self.fcmToken)"}]}"#)
        guard case .routed(let device) = result.first else { Issue.record("not routed"); return }
        #expect(device.provider == .fcm && device.platform == .ios)
    }

    @Test func flatOneDeviceLine() throws {
        let result = try routes(#"{"id":42,"platform":"ios","token":"\#(Self.apnsToken)"}"#)
        guard case .routed(let device) = result.first, result.count == 1 else { Issue.record("not routed"); return }
        #expect(device.index == 0 && device.provider == .apns)
    }

    @Test func badDevicesAreRejectedAloneTheRestStillRoutes() throws {
        let line = #"""
        {"id":"c-1","devices":[
          {"platform":"ios","token":"not-hex!"},
          {"platform":"blackberry","token":"x"},
          {"platform":"android","provider":"apns","token":"\#(Self.fcmToken)"},
          {"platform":"android","token":"short"},
          {"platform":"android","token":"\#(Self.fcmToken)"}
        ]}
        """#
        let result = try routes(line)
        #expect(result.count == 5)
        let codes = result.map { route -> String in
            switch route {
            case .routed: "routed"
            case .rejected(_, _, let reason): reason.code
            case .notTargeted: "not targeted"
            }
        }
        #expect(codes == ["invalid_token", "unknown_platform", "invalid_device", "invalid_token", "routed"])
        if case .rejected(let index, _, let reason) = result[1] {
            #expect(index == 1)
            #expect(reason.message.contains("blackberry"))
        }
    }

    @Test func apnsTokenRules() {
        func check(_ token: String) -> String? {
            Array(token.utf8).withUnsafeBytes { DeviceTokenRules.validateAPNs($0) }
        }
        #expect(check(Self.apnsToken) == nil)
        #expect(check(String(repeating: "AB", count: 50)) == nil, "longer tokens are valid: APNs does not fix the length")
        #expect(check(String(Self.apnsToken.dropLast())) != nil, "odd digit count")
        #expect(check(String(Self.apnsToken.dropLast(2)) + "/x") != nil, "a path character")
        #expect(check("ab") != nil, "too short")
        #expect(check("") != nil)
    }

    @Test func webSubscriptionNeedsHTTPSEndpointAndKeys() throws {
        let p256dh = "B" + String(repeating: "A", count: 86)
        let auth = String(repeating: "Q", count: 22)
        let ok = #"{"id":"w","devices":[{"platform":"web","subscription":{"endpoint":"https://push.example.net/abc","keys":{"p256dh":"\#(p256dh)","auth":"\#(auth)"}}}]}"#
        guard case .routed(let device) = try routes(ok).first else { Issue.record("not routed"); return }
        #expect(device.provider == .webpush)
        let http = ok.replacingOccurrences(of: "https://", with: "http://")
        guard case .rejected(_, _, let reason) = try routes(http).first else { Issue.record("http endpoint accepted"); return }
        #expect(reason.message.contains("https"))
        let shortKey = ok.replacingOccurrences(of: auth, with: "QQQ")
        guard case .rejected = try routes(shortKey).first else { Issue.record("short auth key accepted"); return }
    }

    @Test func recordLevelRejects() throws {
        let cases: [(String, String)] = [
            (#"{"devices":[]}"#, "missing_id"),
            (#"{"id":"","devices":[{"platform":"ios"}]}"#, "missing_id"),
            (#"{"id":true,"devices":[]}"#, "missing_id"),
            (#"{"id":"c"}"#, "no_devices"),
            (#"{"id":"c","devices":[]}"#, "no_devices"),
            (#"{"id":"c","devices":{"platform":"ios"}}"#, "no_devices"),
            (#"["not","an","object"]"#, "invalid_device"),
        ]
        for (line, code) in cases {
            guard case .failure(let reason) = try route(line) else {
                Issue.record("\(line) was accepted")
                continue
            }
            #expect(reason.code == code, "\(line)")
        }
    }
}

@Suite("Configuration helpers")
struct ConfigHelperTests {
    @Test func didYouMean() {
        #expect(NameSuggestion.closest(to: "icon_colour", in: ["icon", "icon_color", "sound"]) == "icon_color")
        #expect(NameSuggestion.closest(to: "thread-id", in: ["thread_id", "category"]) == "thread_id")
        #expect(NameSuggestion.closest(to: "zzzzzz", in: ["title", "alert"]) == nil)
    }

    @Test func diagnosticsNameFileLineAndPath() {
        let node = ConfigNode(.string("red"), line: 12, column: 5)
        let d = ConfigDiagnostic(.error, path: ConfigPath("notification") / "android" / "icon_color", "expected #rrggbb", at: node)
        #expect(d.description == "12:5: error: notification.android.icon_color: expected #rrggbb")
        #expect(ConfigPath("device_types").appending(index: 2).description == "device_types[2]")
    }

    @Test func countsReconcile() {
        var counts = RunCounts()
        counts.lines = 3
        counts.devices = 5
        counts.written[.apns] = 2
        counts.rejected["invalid_token"] = 1
        counts.skipped["device_type_not_targeted"] = 1
        #expect(!counts.reconciles, "one device unaccounted for")
        counts.written[.fcm] = 1
        #expect(counts.reconciles)
        var total = RunCounts()
        total.add(counts)
        total.add(counts)
        #expect(total.devices == 10 && total.writtenTotal == 6 && total.reconciles)
    }
}

@Suite("Audience routing: reused storage")
struct AudienceRouterReuseTests {
    /// The table of docs/audience.md, written out: every other pair is refused.
    @Test func allowsIsTheDocumentedTable() {
        let documented: Set<String> = ["ios apns", "ios fcm", "android fcm", "web webpush", "web fcm", "amazon adm",
                                       "sms webhook", "email webhook", "open webhook"]
        for platform in Platform.allCases {
            for provider in Provider.allCases {
                let pair = "\(platform.rawValue) \(provider.rawValue)"
                #expect(platform.allows(provider) == documented.contains(pair), "\(pair)")
                #expect(platform.allowedProviders.contains(provider) == documented.contains(pair), "\(pair)")
            }
        }
    }

    @Test func routingIntoAnArrayReplacesWhatItHeld() throws {
        let token = AudienceRouterTests.apnsToken
        var routes: [DeviceRoute] = []
        let two = try JSONDocument(parsing: #"{"id":1,"devices":[{"platform":"ios","token":"\#(token)"},{"platform":"ios","token":"bad"}]}"#)
        let id = try AudienceRouter.route(two.root, into: &routes).get()
        #expect(id.int64Value == 1 && routes.count == 2)
        let one = try JSONDocument(parsing: #"{"id":"x","platform":"ios","token":"\#(token)"}"#)
        _ = try AudienceRouter.route(one.root, into: &routes).get()
        #expect(routes.count == 1)
        let none = try JSONDocument(parsing: #"{"id":"y","devices":[]}"#)
        #expect(throws: RejectReason.self) { try AudienceRouter.route(none.root, into: &routes).get() }
        #expect(routes.isEmpty)
    }

    /// Devices of a platform outside the targets are `.notTargeted` before their token is read:
    /// a bad token there is not a reject. The provider they count under is the one they name
    /// when the platform allows it, else the platform's default.
    @Test func untargetedDevicesAreNotValidated() throws {
        let devices = [
            #"{"platform":"ios","token":"\#(AudienceRouterTests.apnsToken)"}"#, #"{"platform":"web","subscription":1}"#,
            #"{"platform":"android","token":"x y"}"#, #"{"platform":"android","provider":"adm","token":""}"#,
            #"{"platform":"web","provider":"fcm"}"#, #"{"platform":"mars","token":"t"}"#, #"{"platform":"ios","token":"short"}"#,
            #"{"platform":"amazon","provider":7}"#, #"{"platform":"sms","provider":"webpush","address":"+1"}"#,
        ]
        let line = #"{"id":"c","devices":["# + devices.joined(separator: ",") + "]}"
        let document = try JSONDocument(parsing: line)
        var routes: [DeviceRoute] = []
        _ = try AudienceRouter.route(document.root, into: &routes, targeting: PlatformSet([.ios])).get()
        let described = routes.map { route -> String in
            switch route {
            case .routed(let d): "routed \(d.index) \(d.platform) \(d.provider)"
            case .rejected(let i, let p, let reason): "rejected \(i) \(p.map(\.rawValue) ?? "-") \(reason.code)"
            case .notTargeted(let i, let p, let provider): "skipped \(i) \(p) \(provider)"
            }
        }
        #expect(described == [
            "routed 0 ios apns", "skipped 1 web webpush", "skipped 2 android fcm",
            // adm cannot reach android: counted under android's own provider.
            "skipped 3 android fcm", "skipped 4 web fcm",
            "rejected 5 - unknown_platform", "rejected 6 ios invalid_token",
            // A provider that is not a string, or not one the platform allows: the platform's own.
            "skipped 7 amazon adm", "skipped 8 sms webhook",
        ])
        // Every platform targeted: the same line rejects the bad tokens.
        _ = try AudienceRouter.route(document.root, into: &routes, targeting: .all).get()
        #expect(routes.filter { if case .notTargeted = $0 { true } else { false } }.isEmpty)
        #expect(routes.filter { if case .rejected = $0 { true } else { false } }.count == 8)
    }

    @Test func platformSetHoldsEachPlatformAsItsOwnBit() {
        for platform in Platform.allCases {
            let one = PlatformSet([platform])
            #expect(Platform.allCases.filter(one.contains) == [platform])
            #expect(PlatformSet.all.contains(platform))
            #expect(!PlatformSet().contains(platform))
        }
    }
}
