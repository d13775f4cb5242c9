import Foundation
import PushlineEmulator

extension EmulatorFixture {
    func connect() async throws -> H2TestClient {
        try await H2TestClient.connect(port: port, certificatePEM: emulator.configuration.tls.certificatePEM)
    }

    /// An access token from the emulator's `/token`, obtained through `client`.
    func accessToken(_ client: H2TestClient) async throws -> String {
        let assertion = TestJWT.oauthAssertion(
            key: credentials.fcmPrivateKey, keyID: credentials.privateKeyID, clientEmail: credentials.clientEmail,
            audience: emulator.tokenURI, issuedAt: clock.seconds
        )
        let body = Array("grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=\(assertion)".utf8)
        let outcome = try await client.request("POST", "/token", headers: [("content-type", "application/x-www-form-urlencoded")], body: body)
        guard case .response(200, _, let text) = outcome,
              let json = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any],
              let token = json["access_token"] as? String
        else { throw CurlError(description: "no access token: \(outcome)") }
        return token
    }

    func sendAPNs(_ client: H2TestClient, token device: String) async throws -> H2TestClient.Outcome {
        try await client.request("POST", "/3/device/\(device)", headers: apnsHeaders(), body: EmulatorFixture.alertPayload)
    }

    func sendFCM(_ client: H2TestClient, accessToken: String, token device: String) async throws -> H2TestClient.Outcome {
        let body = Array(#"{"message":{"token":"\#(device)","data":{"k":"v"}}}"#.utf8)
        return try await client.request("POST", "/v1/projects/\(credentials.projectID)/messages:send", headers: [("authorization", "Bearer \(accessToken)")], body: body)
    }
}

extension H2TestClient.Outcome {
    /// The FcmError code of an FCM error body.
    var fcmErrorCode: String? {
        guard case .response(_, _, let body) = self, let start = body.range(of: "\"errorCode\":\"") else { return nil }
        let rest = body[start.upperBound...]
        return rest.firstIndex(of: "\"").map { String(rest[..<$0]) }
    }
}
