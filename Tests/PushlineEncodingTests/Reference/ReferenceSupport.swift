import Foundation
import PushlineCore
import PushlineEncoding
import Testing

/// Pipelines for the reference examples: the example's `notification` object is pasted as is
/// (JSON is YAML), with providers for every route.
enum Reference {
    static let providers = """
    providers:
      apns: { topic: com.example.app }
      fcm: { project_id: my-project }
      sms: { url: "https://hooks.example.com/sms" }
      email: { url: "https://hooks.example.com/email" }
      "open::sms": { url: "https://hooks.example.com/open-sms" }
      "open::email": { url: "https://hooks.example.com/open-email" }
    """

    static func pipeline(_ deviceTypes: String, style: String = "airship", _ notification: String, extra: String = "") -> String {
        "name: reference\nstyle: \(style)\ndevice_types: \(deviceTypes)\n\(providers)\n\(extra)notification: \(notification)\n"
    }

    static let p256dh = "BNcRdreALRFXTkOOUHK1EtK2wtaz5Ry4YfYCA_0QTpQtUbVlUls0VJXg7A8u-Ts1XbjhazAkj7I99e8QcYP7DkM"
    static let auth = "tBHItJI5svbpez7KI4CCXg"
    static let admToken = "amzn1.adm-registration.v3.Y29tLmFtYXpvbi5EZXZpY2VNZXNzYWdpbmcuUmVnaXN0cmF0aW9uSWRFbmNyeXB0aW9uS2V5ITEhOE9rZ2h5"

    /// One device of each platform in a single audience line.
    static func line(_ devices: String, extra: String = "") -> String {
        #"{"id":"c-1",\#(extra)"devices":[\#(devices)]}"#
    }

    static let ios = #"{"platform":"ios","token":"\#(apnsToken)"}"#
    static let iosFCM = #"{"platform":"ios","provider":"fcm","token":"\#(fcmToken)"}"#
    static let android = #"{"platform":"android","token":"\#(fcmToken)"}"#
    static let amazon = #"{"platform":"amazon","token":"\#(admToken)"}"#
    static let web = #"{"platform":"web","subscription":{"endpoint":"https://push.example.net/sub/1","keys":{"p256dh":"\#(p256dh)","auth":"\#(auth)"}}}"#
    static let sms = #"{"platform":"sms","address":"+15551234567"}"#
    static let email = #"{"platform":"email","address":"jane@example.com"}"#
}

extension EncodedLine {
    func request(_ platform: String) -> [String: Any]? {
        requests.first { $0["platform"] as? String == platform }
    }

    func body(_ platform: String) -> Any? { request(platform)?["body"] }
}

/// The message of an error (or warning) at `path`, if any.
func message(at path: String, in found: [ConfigDiagnostic]) -> String? {
    found.first { $0.path == path }?.message
}

/// Parses a JSON string value (the Airship SDK's JSON-in-a-string data values).
func parsedJSONString(_ value: Any?) -> Any? {
    guard let text = value as? String else { return nil }
    return try? JSONSerialization.jsonObject(with: Data(text.utf8))
}
