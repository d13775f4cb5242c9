import Foundation

/// ADM requests built here from the wire contract (PROVIDERS.md, docs/emulator.md), not with
/// the emulator's code.
enum TestADM {
    static let clientID = "amzn1.application-oa2-client.pushline-emulator"
    static let formType = ("content-type", "application/x-www-form-urlencoded")

    /// `application/x-www-form-urlencoded`: everything but unreserved characters as `%XX`.
    static func formEncode(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                out += String(format: "%%%02X", byte)
            }
        }
        return out
    }

    /// The client-credentials form a sender posts to `/auth/O2/token`.
    static func tokenForm(clientID: String = clientID, secret: String, scope: String = "messaging:push", grant: String = "client_credentials") -> [UInt8] {
        Array("grant_type=\(formEncode(grant))&scope=\(formEncode(scope))&client_id=\(formEncode(clientID))&client_secret=\(formEncode(secret))".utf8)
    }

    /// The headers the sender sends with every message.
    static func headers(accessToken: String) -> [(String, String)] {
        [
            ("authorization", "Bearer \(accessToken)"), ("content-type", "application/json"), ("accept", "application/json"),
            ("x-amzn-type-version", "com.amazon.device.messaging.ADMMessage@1.0"),
            ("x-amzn-accept-type", "com.amazon.device.messaging.ADMSendResult@1.0"),
        ]
    }

    static func path(_ registrationID: String) -> String { "/messaging/registrations/\(registrationID)/messages" }

    /// A registration id of the shape Amazon gives (letters, digits, `.`, `-`, `_`).
    static func registrationID(_ n: Int) -> String { "amzn1.adm-registration.v3.Y2_test-\(n)" }

    static let message = Array(#"{"data":{"title":"Hi","body":"There"},"consolidationKey":"news","expiresAfter":86400}"#.utf8)

    /// `{"data":{"k":"<filler>"}}` whose `data` object is exactly `size` bytes.
    static func message(dataSize size: Int) -> [UInt8] {
        let frame = #"{"k":""}"#.utf8.count
        return Array(#"{"data":{"k":""#.utf8) + Array(repeating: UInt8(ascii: "a"), count: size - frame) + Array(#""}}"#.utf8)
    }
}

extension EmulatorFixture {
    /// An ADM access token from the emulator's `/auth/O2/token`, obtained through `client`.
    func admAccessToken(_ client: H2TestClient) async throws -> String {
        let outcome = try await client.request("POST", "/auth/O2/token", headers: [TestADM.formType], body: TestADM.tokenForm(secret: credentials.admClientSecret))
        guard case .response(200, _, let text) = outcome,
              let json = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any],
              let token = json["access_token"] as? String
        else { throw CurlError(description: "no ADM access token: \(outcome)") }
        return token
    }

    func sendADM(_ client: H2TestClient, accessToken: String, registrationID: String, body: [UInt8] = TestADM.message) async throws -> H2TestClient.Outcome {
        try await client.request("POST", TestADM.path(registrationID), headers: TestADM.headers(accessToken: accessToken), body: body)
    }
}

extension H2TestClient.Outcome {
    /// A JSON answer's string member `name`.
    func jsonString(_ name: String) -> String? {
        guard case .response(_, _, let body) = self,
              let json = try? JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any]
        else { return nil }
        return json[name] as? String
    }

    var headers: [String: String] {
        if case .response(_, let headers, _) = self { return headers }
        return [:]
    }

    var body: String? {
        if case .response(_, _, let body) = self { return body }
        return nil
    }
}
