import Foundation
import PushlineEmulator
import Testing

@Suite("ADM and its token endpoint")
struct ADMEndpointTests {
    static func isUUID(_ text: String?) -> Bool {
        guard let text else { return false }
        let parts = text.split(separator: "-", omittingEmptySubsequences: false).map(\.count)
        return parts == [8, 4, 4, 4, 12] && text.allSatisfy { $0.isHexDigit || $0 == "-" }
    }

    @Test("curl end to end: client credentials buy an Atc| token that the send endpoint accepts, answered 200 with the same registrationID")
    func tokenAndSendEndToEnd() async throws {
        try await withEmulator { fixture in
            let tokenResponse = try Curl.request(
                "POST", fixture.emulator.admTokenURI, caFile: fixture.caFile, headers: [TestADM.formType],
                body: TestADM.tokenForm(secret: fixture.credentials.admClientSecret)
            )
            #expect(tokenResponse.status == 200, "\(tokenResponse.bodyText)")
            #expect(tokenResponse.httpVersion == "2")
            let json = try tokenResponse.json()
            let accessToken = try #require(json["access_token"] as? String)
            #expect(accessToken.hasPrefix("Atc|") && accessToken.count > 20)
            #expect(json["expires_in"] as? Int == 3599)
            #expect(json["scope"] as? String == "messaging:push")
            #expect(json["token_type"] as? String == "bearer")
            #expect(Set(json.keys) == ["access_token", "expires_in", "scope", "token_type"])

            let registrationID = TestADM.registrationID(1)
            let send = try Curl.request(
                "POST", fixture.endpoint + TestADM.path(registrationID), caFile: fixture.caFile,
                headers: TestADM.headers(accessToken: accessToken), body: TestADM.message
            )
            #expect(send.status == 200, "\(send.bodyText)")
            #expect(send.httpVersion == "2")
            #expect(send.bodyText == #"{"registrationID":"\#(registrationID)"}"#)
            #expect(Self.isUUID(send.headers["x-amzn-requestid"]), "\(send.headers)")

            let stats = fixture.emulator.stats()
            #expect(stats.admOAuth.issued == 1)
            #expect(stats.adm.requests == 1)
            #expect(stats.adm.delivered == 1)
            #expect(stats.adm.tokens[registrationID]?.answers == ["200"])
            // Access tokens and the client secret never appear in the stats.
            let statsText = try Curl.request("GET", "\(fixture.endpoint)/stats", caFile: fixture.caFile).bodyText
            #expect(!statsText.contains(accessToken))
            #expect(!statsText.contains(fixture.credentials.admClientSecret))
            #expect(statsText.contains(#""adm":{"#))
            #expect(statsText.contains(#""admOAuth":{"issued":1,"rejected":0}"#))
        }
    }

    @Test("token endpoint: fields in any order and escaped any way; a wrong id or secret is 401 invalid_client, a wrong scope 400 invalid_scope, another grant 400 unsupported_grant_type")
    func tokenEndpointRules() async throws {
        try await withEmulator({ $0.accessTokenLifetimeSeconds = 60 }) { fixture in
            let client = try await fixture.connect()
            defer { Task { await client.close() } }
            let secret = fixture.credentials.admClientSecret
            let id = TestADM.clientID
            let accepted = [
                "client_secret=\(secret)&client_id=\(id)&scope=messaging%3apush&grant_type=client_credentials",
                "scope=messaging:push&grant_type=client%5Fcredentials&client_id=\(id.replacingOccurrences(of: ".", with: "%2E"))&client_secret=\(secret)",
                "grant_type=client_credentials&client_id=\(id)&client_secret=\(secret)&scope=messaging%3Apush&extra=1&scope=other",
            ]
            for form in accepted {
                let outcome = try await client.request("POST", "/auth/O2/token", headers: [TestADM.formType], body: Array(form.utf8))
                #expect(outcome.status == 200, "\(form.prefix(40)): \(outcome)")
                #expect(outcome.body?.contains(#""expires_in":60,"#) == true, "\(outcome)")
            }
            let otherSecret = String(secret.reversed())
            let cases: [(String, String, [UInt8], Int, String)] = [
                ("wrong secret", "POST", TestADM.tokenForm(secret: otherSecret), 401, "invalid_client"),
                ("secret with a space", "POST", TestADM.tokenForm(secret: secret + " "), 401, "invalid_client"),
                ("wrong client id", "POST", TestADM.tokenForm(clientID: "amzn1.application-oa2-client.other", secret: secret), 401, "invalid_client"),
                ("no secret", "POST", Array("grant_type=client_credentials&scope=messaging%3Apush&client_id=\(id)".utf8), 401, "invalid_client"),
                ("wrong scope", "POST", TestADM.tokenForm(secret: secret, scope: "profile"), 400, "invalid_scope"),
                ("scope list", "POST", TestADM.tokenForm(secret: secret, scope: "messaging:push profile"), 400, "invalid_scope"),
                ("no scope", "POST", Array("grant_type=client_credentials&client_id=\(id)&client_secret=\(secret)".utf8), 400, "invalid_scope"),
                ("jwt grant", "POST", TestADM.tokenForm(secret: secret, grant: "urn:ietf:params:oauth:grant-type:jwt-bearer"), 400, "unsupported_grant_type"),
                ("bad escape", "POST", Array("grant_type=client_credentials%&scope=messaging%3Apush&client_id=\(id)&client_secret=\(secret)".utf8), 400, "unsupported_grant_type"),
                ("empty body", "POST", [], 400, "unsupported_grant_type"),
                ("GET", "GET", [], 405, "invalid_request"),
            ]
            for (name, method, body, status, error) in cases {
                let outcome = try await client.request(method, "/auth/O2/token", headers: [TestADM.formType], body: body)
                #expect(outcome.status == status, "\(name): \(outcome)")
                #expect(outcome.jsonString("error") == error, "\(name): \(outcome)")
                #expect(outcome.jsonString("error_description")?.isEmpty == false, "\(name): \(outcome)")
            }
            let stats = fixture.emulator.stats()
            #expect(stats.admOAuth.issued == accepted.count)
            #expect(stats.admOAuth.rejected == cases.count)
            #expect(stats.oauth.issued == 0, "Google's endpoint is counted apart")
        }
    }

    @Test("send: no, unknown, Google's or expired access token is 401 AccessTokenExpired; a refreshed one works")
    func accessTokens() async throws {
        let clock = ManualClock(seconds: TestJWT.nowSeconds)
        try await withEmulator({ $0.clock = clock.emulatorClock }) { fixture in
            let client = try await fixture.connect()
            defer { Task { await client.close() } }
            let device = TestADM.registrationID(7)
            let token = try await fixture.admAccessToken(client)
            let google = try await fixture.accessToken(client)
            let headers = TestADM.headers(accessToken: token)
            let without = headers.filter { $0.0 != "authorization" }
            let cases: [(String, [(String, String)])] = [
                ("none", without),
                ("unknown", TestADM.headers(accessToken: "Atc|unknown")),
                ("Google's", TestADM.headers(accessToken: google)),
                ("basic", without + [("authorization", "Basic \(token)")]),
                ("twice", headers + [("authorization", "Bearer \(token)")]),
            ]
            for (name, requestHeaders) in cases {
                let outcome = try await client.request("POST", TestADM.path(device), headers: requestHeaders, body: TestADM.message)
                #expect(outcome.status == 401, "\(name): \(outcome)")
                #expect(outcome.reason == "AccessTokenExpired", "\(name): \(outcome)")
            }
            // The scheme in any case.
            let lower = try await client.request("POST", TestADM.path(device), headers: without + [("authorization", "bearer \(token)")], body: TestADM.message)
            #expect(lower.status == 200, "\(lower)")
            // Google's endpoint does not take ADM's token either.
            let fcm = try await fixture.sendFCM(client, accessToken: token, token: TestDevice.fcm(1))
            #expect(fcm.status == 401)

            clock.advance(3599)
            let expired = try await fixture.sendADM(client, accessToken: token, registrationID: device)
            #expect(expired.status == 401, "\(expired)")
            #expect(expired.reason == "AccessTokenExpired")
            let refreshed = try await fixture.admAccessToken(client)
            #expect(refreshed != token)
            #expect(try await fixture.sendADM(client, accessToken: refreshed, registrationID: device).status == 200)
            let stats = fixture.emulator.stats()
            #expect(stats.adm.answers["401 AccessTokenExpired"] == cases.count + 1)
            #expect(stats.adm.tokens[device]?.answers == ["200", "200"], "rejected credentials are not recorded per token")
        }
    }

    @Test("send: registration id, type headers and body rules; 6144 bytes of data is 200, 6145 is 413")
    func requestRules() async throws {
        try await withEmulator { fixture in
            let client = try await fixture.connect()
            defer { Task { await client.close() } }
            let token = try await fixture.admAccessToken(client)
            let headers = TestADM.headers(accessToken: token)
            func without(_ name: String) -> [(String, String)] { headers.filter { $0.0 != name } }
            func replacing(_ name: String, _ value: String) -> [(String, String)] { without(name) + [(name, value)] }
            let device = TestADM.registrationID(3)
            let path = TestADM.path(device)
            func body(_ text: String) -> [UInt8] { Array(text.utf8) }
            let cases: [(String, String, String, [(String, String)], [UInt8], Int, String?)] = [
                ("unreserved id with ~", "POST", TestADM.path("a~b_c.d-9"), headers, TestADM.message, 200, nil),
                ("4096-byte id", "POST", TestADM.path(String(repeating: "r", count: 4096)), headers, TestADM.message, 200, nil),
                ("4097-byte id", "POST", TestADM.path(String(repeating: "r", count: 4097)), headers, TestADM.message, 400, "InvalidRegistrationId"),
                ("empty id", "POST", TestADM.path(""), headers, TestADM.message, 400, "InvalidRegistrationId"),
                ("escaped id", "POST", TestADM.path("a%20b"), headers, TestADM.message, 400, "InvalidRegistrationId"),
                ("id with a slash", "POST", TestADM.path("a/b"), headers, TestADM.message, 400, "InvalidRegistrationId"),
                ("no /messages", "POST", "/messaging/registrations/\(device)", headers, TestADM.message, 404, "NotFound"),
                ("GET", "GET", path, headers, [], 405, "MethodNotAllowed"),
                ("no type version", "POST", path, without("x-amzn-type-version"), TestADM.message, 400, "InvalidType"),
                ("type version 2.0", "POST", path, replacing("x-amzn-type-version", "com.amazon.device.messaging.ADMMessage@2.0"), TestADM.message, 400, "InvalidType"),
                ("no accept type", "POST", path, without("x-amzn-accept-type"), TestADM.message, 400, "InvalidType"),
                ("text/plain", "POST", path, replacing("content-type", "text/plain"), TestADM.message, 400, "InvalidType"),
                ("accept text/html", "POST", path, replacing("accept", "text/html"), TestADM.message, 400, "InvalidType"),
                ("charset and */*", "POST", path, replacing("content-type", "Application/JSON; charset=UTF-8").filter { $0.0 != "accept" } + [("accept", "text/html, */*;q=0.1")], TestADM.message, 200, nil),
                ("no accept", "POST", path, without("accept"), TestADM.message, 200, nil),
                ("6144 bytes of data", "POST", path, headers, TestADM.message(dataSize: 6144), 200, nil),
                ("6145 bytes of data", "POST", path, headers, TestADM.message(dataSize: 6145), 413, "MessageTooLarge"),
                ("70 KB body", "POST", path, headers, [UInt8](repeating: UInt8(ascii: " "), count: 70_000), 413, "MessageTooLarge"),
                ("not JSON", "POST", path, headers, body("data=1"), 400, "InvalidData"),
                ("empty", "POST", path, headers, [], 400, "InvalidData"),
                ("array", "POST", path, headers, body(#"[{"data":{}}]"#), 400, "InvalidData"),
                ("no data", "POST", path, headers, body(#"{"consolidationKey":"k"}"#), 400, "InvalidData"),
                ("data a string", "POST", path, headers, body(#"{"data":"x"}"#), 400, "InvalidData"),
                ("number value", "POST", path, headers, body(#"{"data":{"n":1}}"#), 400, "InvalidData"),
                ("object value", "POST", path, headers, body(#"{"data":{"n":{}}}"#), 400, "InvalidData"),
                ("unknown member", "POST", path, headers, body(#"{"data":{},"priority":"high"}"#), 400, "InvalidData"),
                ("data twice", "POST", path, headers, body(#"{"data":{},"data":{}}"#), 400, "InvalidData"),
                ("consolidationKey a number", "POST", path, headers, body(#"{"data":{},"consolidationKey":1}"#), 400, "InvalidConsolidationKey"),
                ("consolidationKey of 65 characters", "POST", path, headers, body(#"{"data":{},"consolidationKey":"\#(String(repeating: "k", count: 65))"}"#), 400, "InvalidConsolidationKey"),
                ("consolidationKey of 64 characters", "POST", path, headers, body(#"{"data":{},"consolidationKey":"\#(String(repeating: "k", count: 64))"}"#), 200, nil),
                ("expiresAfter 0", "POST", path, headers, body(#"{"data":{},"expiresAfter":0}"#), 400, "InvalidExpiration"),
                ("expiresAfter 31 days and a second", "POST", path, headers, body(#"{"data":{},"expiresAfter":2678401}"#), 400, "InvalidExpiration"),
                ("expiresAfter 1.5", "POST", path, headers, body(#"{"data":{},"expiresAfter":1.5}"#), 400, "InvalidExpiration"),
                ("expiresAfter a string", "POST", path, headers, body(#"{"data":{},"expiresAfter":"60"}"#), 400, "InvalidExpiration"),
                ("expiresAfter 2^64", "POST", path, headers, body(#"{"data":{},"expiresAfter":18446744073709551616}"#), 400, "InvalidExpiration"),
                ("expiresAfter 31 days", "POST", path, headers, body(#"{"data":{},"expiresAfter":2678400}"#), 200, nil),
                ("empty data", "POST", path, headers, body(#"{"data":{}}"#), 200, nil),
            ]
            var delivered = 0
            for (name, method, target, requestHeaders, requestBody, status, reason) in cases {
                let outcome = try await client.request(method, target, headers: requestHeaders, body: requestBody)
                #expect(outcome.status == status, "\(name): \(outcome)")
                #expect(outcome.reason == reason, "\(name): \(outcome)")
                #expect(Self.isUUID(outcome.headers["x-amzn-requestid"]), "\(name): \(outcome.headers)")
                if status == 200 { delivered += 1 }
            }
            let stats = fixture.emulator.stats()
            #expect(stats.adm.requests == cases.count)
            #expect(stats.adm.delivered == delivered)
            #expect(stats.adm.answers["413 MessageTooLarge"] == 2)
            #expect(stats.adm.tokens["a%20b"] == nil && stats.adm.tokens[""] == nil, "invalid ids are not recorded")
        }
    }

    @Test("faults: Unregistered and replaced ids on every attempt, the replacement derived from the seed; scripted 429 MaxRateExceeded, 503 and 500, then 200")
    func faults() async throws {
        var rates = FaultRates()
        rates[.admUnregistered] = 0.25
        rates[.admReplaced] = 0.25
        // Other providers' token-level rates must not reach ADM.
        rates[.apnsUnregistered] = 0.5
        rates[.webpushGone] = 0.5
        var plan = FaultPlan(seed: 21, rates: rates)
        let scripted = TestADM.registrationID(1000)
        plan.scripted[scripted] = [.tooManyRequests, .serviceUnavailable, .internalServerError, nil]
        plan.retryAfterSeconds = 4
        try await withEmulator({ $0.faults = plan }) { fixture in
            let client = try await fixture.connect()
            defer { Task { await client.close() } }
            let token = try await fixture.admAccessToken(client)
            var counts: [String: Int] = [:]
            var replacements = Set<String>()
            for index in 0..<60 {
                let device = TestADM.registrationID(index)
                let expected = plan.fault(for: .adm, token: device, attempt: 0)
                #expect(expected == nil || expected == .admUnregistered || expected == .admReplaced)
                for _ in 0..<2 {
                    let outcome = try await fixture.sendADM(client, accessToken: token, registrationID: device)
                    switch expected {
                    case .admUnregistered?:
                        #expect(outcome.status == 400, "\(device): \(outcome)")
                        #expect(outcome.reason == "Unregistered")
                    case .admReplaced?:
                        #expect(outcome.status == 200, "\(device): \(outcome)")
                        let replacement = try #require(outcome.jsonString("registrationID"))
                        #expect(replacement != device)
                        #expect(replacement == plan.replacementRegistrationID(for: device))
                        #expect(replacement.hasPrefix("amzn1.adm-registration.v3.replaced-"))
                        #expect(replacement.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "." || $0 == "-") }, "a valid registration id")
                        replacements.insert(replacement)
                    default:
                        #expect(outcome.status == 200, "\(device): \(outcome)")
                        #expect(outcome.jsonString("registrationID") == device)
                    }
                }
                counts[expected?.rawValue ?? "none", default: 0] += 1
            }
            #expect((5...25).contains(counts["admUnregistered"] ?? 0), "about 25 % of 60: \(counts)")
            #expect((5...25).contains(counts["admReplaced"] ?? 0), "about 25 % of 60: \(counts)")
            #expect(replacements.count == counts["admReplaced"], "one replacement per id, the same on every attempt")
            // The same seed names the same replacement; another seed another one.
            #expect(FaultPlan(seed: 22).replacementRegistrationID(for: TestADM.registrationID(0)) != FaultPlan(seed: 21).replacementRegistrationID(for: TestADM.registrationID(0)))

            var answers: [(Int?, String?, String?)] = []
            for _ in 0..<4 {
                let outcome = try await fixture.sendADM(client, accessToken: token, registrationID: scripted)
                answers.append((outcome.status, outcome.reason, outcome.headers["retry-after"]))
            }
            #expect(answers.map(\.0) == [429, 503, 500, 200])
            #expect(answers.map(\.1) == ["MaxRateExceeded", "ServiceUnavailable", "InternalServerError", nil])
            #expect(answers.map(\.2) == ["4", "4", nil, nil])

            let stats = fixture.emulator.stats()
            #expect(stats.adm.answers["400 Unregistered"] == (counts["admUnregistered"] ?? 0) * 2)
            #expect(stats.adm.answers["200 replaced"] == (counts["admReplaced"] ?? 0) * 2)
            #expect(stats.adm.delivered == ((counts["none"] ?? 0) + (counts["admReplaced"] ?? 0)) * 2 + 1, "a replaced id is delivered")
            #expect(stats.adm.tokens[scripted]?.answers == ["429 MaxRateExceeded", "503 ServiceUnavailable", "500 InternalServerError", "200"])
        }
    }

    @Test("per-attempt rates reach ADM as the plan says; refused streams and dropped connections are not processed")
    func perAttemptFaults() async throws {
        var plan = FaultPlan(seed: 8, rates: FaultRates([.tooManyRequests: 0.2, .serviceUnavailable: 0.2, .quotaExceeded: 0.5]))
        let refused = TestADM.registrationID(500)
        plan.scripted[refused] = [.refusedStream, .dropConnection, nil]
        try await withEmulator({ $0.faults = plan }) { fixture in
            let client = try await fixture.connect()
            let token = try await fixture.admAccessToken(client)
            for index in 0..<40 {
                let device = TestADM.registrationID(index)
                let expected: (Int, String?) = switch plan.fault(for: .adm, token: device, attempt: 0) {
                case nil: (200, nil)
                case .tooManyRequests?: (429, "MaxRateExceeded")
                case .serviceUnavailable?: (503, "ServiceUnavailable")
                case let other?: (-1, other.rawValue)
                }
                let outcome = try await fixture.sendADM(client, accessToken: token, registrationID: device)
                #expect(outcome.status == expected.0, "\(device): \(outcome)")
                #expect(outcome.reason == expected.1, "\(device): \(outcome)")
            }
            await client.close()
            var outcomes: [H2TestClient.Outcome] = []
            for _ in 0..<3 {
                let connection = try await fixture.connect()
                let fresh = try await fixture.admAccessToken(connection)
                outcomes.append(try await fixture.sendADM(connection, accessToken: fresh, registrationID: refused))
                await connection.close()
            }
            #expect(outcomes[0] == .reset(.refusedStream))
            #expect(outcomes[1] == .closed)
            #expect(outcomes[2].status == 200)
            #expect(fixture.emulator.stats().adm.tokens[refused]?.answers == ["refused_stream", "dropped_connection", "200"])
        }
    }

    @Test("--record-adm: one line per message answered 200 (a replaced one under the id sent), the body as received; nothing for errors")
    func recordFile() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("adm-record-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let record = folder.appendingPathComponent("adm.ndjson").path
        var plan = FaultPlan(seed: 1)
        plan.scripted["replaced-one"] = [.admReplaced]
        plan.scripted["gone-one"] = [.admUnregistered]
        try await withEmulator({ $0.recordADM = record; $0.faults = plan }) { fixture in
            let client = try await fixture.connect()
            defer { Task { await client.close() } }
            let token = try await fixture.admAccessToken(client)
            let multiline = Array("{\n  \"data\": {\"a\": \"b\\nc\"}\n}".utf8)
            #expect(try await fixture.sendADM(client, accessToken: token, registrationID: "first").status == 200)
            #expect(try await fixture.sendADM(client, accessToken: token, registrationID: "second", body: multiline).status == 200)
            #expect(try await fixture.sendADM(client, accessToken: token, registrationID: "replaced-one").status == 200)
            #expect(try await fixture.sendADM(client, accessToken: token, registrationID: "gone-one").status == 400)
            #expect(try await fixture.sendADM(client, accessToken: token, registrationID: "bad", body: Array(#"{"data":1}"#.utf8)).status == 400)
            let lines = try String(contentsOfFile: record, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
            #expect(lines == [
                #"{"registration_id":"first","body":{"data":{"title":"Hi","body":"There"},"consolidationKey":"news","expiresAfter":86400}}"#,
                #"{"registration_id":"second","body":{   "data": {"a": "b\nc"} }}"#,
                #"{"registration_id":"replaced-one","body":{"data":{"title":"Hi","body":"There"},"consolidationKey":"news","expiresAfter":86400}}"#,
                "",
            ])
            for line in lines.dropLast() {
                #expect((try? JSONSerialization.jsonObject(with: Data(line.utf8))) != nil, "\(line)")
            }
            let mode = try FileManager.default.attributesOfItem(atPath: record)[.posixPermissions] as? Int
            #expect(mode == 0o600)
        }
        // A file that cannot be opened stops the start, naming it.
        var configuration = EmulatorConfiguration(tls: EmulatorFixture.sharedTLS)
        configuration.recordADM = folder.path + "/missing/adm.ndjson"
        let error = await #expect(throws: EmulatorError.self) { _ = try await ProviderEmulator.start(configuration) }
        #expect(error?.description.hasPrefix(folder.path + "/missing/adm.ndjson: cannot be opened to record ADM messages") == true, "\(String(describing: error))")
    }
}
