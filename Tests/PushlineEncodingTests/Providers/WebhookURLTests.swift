import PushlineCore
import PushlineEncoding
import Testing

/// A webhook's `url` is where its requests are POSTed, exactly: a path that resolves elsewhere
/// ('.' or '..' segments) is refused when the pipeline is read. Found by the pipeline fuzzer
/// (its request URL check: a value may fill a path segment, never add or remove one).
struct WebhookURLTests {
    static func pipeline(smsURL: String) -> String {
        """
        name: chat
        device_types: [sms, "open::chat"]
        notification:
          alert: "{{ event.event_title }}"
          sms: { expiry: 3599, shorten_links: true }
          "open::chat": { title: "Hi", summary: s }
        providers:
          sms: { url: "\(smsURL)" }
          "open::chat": { url: "https://hooks.example.com/chat" }
        """
    }

    @Test(arguments: ["https://hooks.example.com/sms/..", "https://hooks.example.com/sms/%2E%2e/x", "https://hooks.example.com/./sms"])
    func aURLWithADotSegmentIsRefusedWithItsPath(url: String) {
        let errors = diagnostics(Self.pipeline(smsURL: url)).filter { $0.severity == .error }
        #expect(errors.count == 1)
        #expect(errors.first?.path.description == "providers.sms.url")
        #expect(errors.first?.message.contains("which names another folder") == true, "\(errors)")
    }

    @Test func aPlainURLCompiles() {
        #expect(diagnostics(Self.pipeline(smsURL: "https://hooks.example.com/sms/v1.2")).filter { $0.severity == .error }.isEmpty)
    }
}
