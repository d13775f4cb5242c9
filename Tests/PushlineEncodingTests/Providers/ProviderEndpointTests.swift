import PushlineEncoding
import Testing

/// `providers.<apns|fcm>.endpoint`: an https origin, nothing more.
@Suite("Provider endpoint: an https://host[:port] origin")
struct ProviderEndpointTests {
    @Test(arguments: [
        ("https://127.0.0.1:8443", "https://127.0.0.1:8443"),
        ("https://127.0.0.1:8443/", "https://127.0.0.1:8443"),
        ("HTTPS://Push.Example.COM", "https://push.example.com"),
        ("https://[::1]:8443", "https://[::1]:8443"),
        ("https://localhost", "https://localhost"),
        ("https://a:65535", "https://a:65535"),
    ])
    func originsAreTakenAndNormalized(text: String, origin: String) {
        #expect(ProviderEndpoint.origin(text) == .success(origin))
    }

    @Test(arguments: [
        ("http://127.0.0.1:8443", "must be https:// (requests always go over TLS; an emulator serves TLS: trust it with ca_file)"),
        ("127.0.0.1:8443", "expected an https://host[:port] origin"),
        ("https://", "expected an https://host[:port] origin"),
        ("https://h/3/device", "must be an origin without a path (https://host[:port]; the provider's request paths are kept)"),
        ("https://h?x=1", "must be an origin without a query (https://host[:port]; the provider's request paths are kept)"),
        ("https://h#f", "must be an origin without a fragment (https://host[:port]; the provider's request paths are kept)"),
        ("https://user@h", "must be an origin without user info (https://host[:port]; the provider's request paths are kept)"),
        ("https://h:0", "has an invalid port (1 to 65535)"),
        ("https://h:65536", "has an invalid port (1 to 65535)"),
        ("https://h:99999999999999999999", "has an invalid port (1 to 65535)"),
        ("https://h:", "has an empty port"),
        ("https://:443", "has no host"),
        ("https://h_x", "has an invalid host (letters, digits, '-' and '.', at most 253)"),
        ("https://h x", "must not hold spaces, control or non-ASCII characters"),
        ("https://h\r\nx", "must not hold spaces, control or non-ASCII characters"),
        ("https://h\"x", "must not hold quotes or backslashes"),
        ("https://[::1", "has an unclosed IPv6 address '['"),
        ("https://[zz]", "has an invalid IPv6 address"),
        ("https://[::1]x", "expected ':port' after the IPv6 address"),
    ])
    func everyOtherShapeIsRefusedWithItsReason(text: String, message: String) {
        guard case .failure(let problem) = ProviderEndpoint.origin(text) else {
            Issue.record("\(text) was taken")
            return
        }
        #expect(problem.description == message)
    }
}
