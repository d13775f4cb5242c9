import PushlineDelivery
import Testing

@Suite("Web Push origins and endpoint checks")
struct WebPushOriginTests {
    static func origin(_ endpoint: String) -> Result<WebPushOrigin, WebPushOrigin.Problem> {
        WebPushOrigin.parse(Array(endpoint.utf8))
    }

    @Test("the origin of an endpoint: scheme and authority, host lowercased, port 443 left out")
    func origins() throws {
        #expect(try Self.origin("https://fcm.googleapis.com/fcm/send/abc:def").get().description == "https://fcm.googleapis.com")
        #expect(try Self.origin("HTTPS://Updates.Push.Services.Mozilla.com/wpush/v2/x").get().description == "https://updates.push.services.mozilla.com")
        #expect(try Self.origin("https://web.push.apple.com:443/QGuQ").get().description == "https://web.push.apple.com")
        #expect(try Self.origin("https://127.0.0.1:8443/push/s001").get().description == "https://127.0.0.1:8443")
        #expect(try Self.origin("https://[::1]:8443/push").get().description == "https://[::1]:8443")
        #expect(try Self.origin("https://wns2-par02p.notify.windows.com?token=1").get().host == "wns2-par02p.notify.windows.com")
    }

    @Test("refused before any request: not https, user information, a bad host or port")
    func refusals() {
        #expect(Self.origin("http://example.com/x") == .failure(.notHTTPS))
        #expect(Self.origin("https://user:pw@example.com/x") == .failure(.userInfo))
        #expect(Self.origin("https://exa_mple.com/x") == .failure(.badHost))
        #expect(Self.origin("https:///x") == .failure(.badHost))
        #expect(Self.origin("https://[::1/x") == .failure(.badHost))
        #expect(Self.origin("https://example.com:0/x") == .failure(.badPort))
        #expect(Self.origin("https://example.com:99999/x") == .failure(.badPort))
        #expect(Self.origin("https://example.com:12a/x") == .failure(.badPort))
    }

    @Test("private, loopback and link-local addresses are refused unless allowed, however they are written")
    func privateAddresses() throws {
        for endpoint in [
            "https://127.0.0.1/x", "https://10.1.2.3/x", "https://172.20.0.1/x", "https://192.168.1.1/x", "https://169.254.169.254/latest",
            "https://100.64.0.1/x", "https://0.0.0.0/x", "https://[::1]/x", "https://[fe80::1]/x", "https://[fd00::1]/x",
            "https://[::ffff:127.0.0.1]/x", "https://[::ffff:169.254.169.254]/x", "https://localhost:8443/x", "https://a.localhost/x",
            // Shorthands inet_aton would read as 127.0.0.1 are names here: resolved, then checked.
            "https://127.1/x", "https://2130706433/x",
        ] {
            let origin = try Self.origin(endpoint).get()
            switch origin.resolve(allowPrivate: false) {
            case .failure(.refused(.privateAddress)), .failure(.unresolvable):
                break
            case .success(let addresses):
                Issue.record("\(endpoint) was allowed: \(addresses)")
            case .failure(let other):
                Issue.record("\(endpoint): \(other)")
            }
        }
        let loopback = try Self.origin("https://127.0.0.1:9/x").get()
        #expect(try loopback.resolve(allowPrivate: true).get() == [.v4([127, 0, 0, 1])])
        #expect(loopback.resolveEntry([.v4([127, 0, 0, 1])]) == nil, "a literal address is not resolved by curl")
        let named = try Self.origin("https://localhost:9/x").get()
        #expect(named.resolveEntry(try named.resolve(allowPrivate: true).get()) == "localhost:9:127.0.0.1")
    }

    @Test("public addresses pass")
    func publicAddresses() throws {
        #expect(IPAddress.v4([8, 8, 8, 8]).isPrivate == false)
        #expect(IPAddress.v4([172, 32, 0, 1]).isPrivate == false)
        #expect(IPAddress.v6([0x26, 0x07, 0xf8, 0xb0] + [UInt8](repeating: 0, count: 11) + [1]).isPrivate == false)
        let origin = try Self.origin("https://8.8.8.8/x").get()
        #expect(try origin.resolve(allowPrivate: false).get() == [.v4([8, 8, 8, 8])])
    }
}
