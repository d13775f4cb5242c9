import Foundation
import PushlineCore
import PushlineEncoding
import Testing

/// A targeted device whose provider the pipeline does not configure is rejected `no_route`, and
/// the reject names the setting to add. (Web Push and ADM devices always have a route when their
/// platform is targeted, so only a device naming another provider than its platform's default
/// reaches this.)
@Suite("no_route rejects name the missing setting")
struct NoRouteTests {
    static func line(_ devices: [[String: Any]]) throws -> String {
        String(decoding: try JSONSerialization.data(withJSONObject: ["id": "c-1", "devices": devices]), as: UTF8.self)
    }

    static func messages(_ out: EncodedLine) -> [String] {
        out.rejects.map { "\($0["code"] ?? "") \($0["reason"] ?? "")" }
    }

    @Test func anIOSDeviceThroughFCMNamesIt() throws {
        let campaign = try compileCampaign("""
        name: t
        device_types: [ios]
        providers: { apns: { topic: com.example.app } }
        notification: { alert: x }
        """)
        let out = try encode(campaign, try Self.line([["platform": "ios", "provider": "fcm", "token": fcmToken], ["platform": "ios", "token": apnsToken]]))
        #expect(out.requests.count == 1)
        #expect(Self.messages(out) == ["no_route device 0: ios through fcm needs providers.fcm in the pipeline"])
    }
}
