import PushlineCore
import Testing

/// Class 4 of issue 7: the one rule for header values, header names and path segments.
@Suite("Wire values")
struct WireValueTests {
    @Test(arguments: [
        ("a\r\nx-evil: 1", "it holds a control character (0x0D)"),
        ("line\nbreak", "it holds a control character (0x0A)"),
        ("nul\u{0}", "it holds a control character (0x00)"),
        ("tab\there", "it holds a control character (0x09)"),
        ("del\u{7F}", "it holds a control character (0x7F)"),
        (String(repeating: "k", count: 65), "it is 65 bytes, at most 64 allowed"),
    ])
    func headerValuesRefused(_ text: String, _ reason: String) {
        let problem = WireValue.headerProblem(text, maxBytes: 64)
        #expect(problem?.description == reason)
        #expect(problem?.isLength == reason.hasPrefix("it is 65"))
    }

    @Test func headerValuesAccepted() {
        for text in ["winback-c-42", "Ação 😀", String(repeating: "k", count: 64), "a b"] {
            #expect(WireValue.headerProblem(text, maxBytes: 64) == nil, "\(text)")
        }
        #expect(WireValue.headerProblem("", maxBytes: 64) == nil)
        #expect(WireValue.headerProblem("", maxBytes: 64, allowEmpty: false)?.description == "it is empty")
        let invalid: [UInt8] = [0x61, 0xFF]
        #expect(invalid.withUnsafeBytes { WireValue.headerProblem($0, maxBytes: 64) }?.description == "it is not valid UTF-8")
    }

    @Test(arguments: [
        ("../../evil", "it holds '/', which would start another path segment"),
        ("a/b", "it holds '/', which would start another path segment"),
        ("a\\b", "it holds '\\', which would start another path segment"),
        ("..", "'.' and '..' name a folder, not a segment"),
        (".", "'.' and '..' name a folder, not a segment"),
        ("%2e%2e", "it holds '%' (only letters, digits, '-', '.', '_' and '~' are allowed)"),
        ("a b", "it holds 0x20 (only ASCII letters, digits, '-', '.', '_' and '~' are allowed)"),
        ("é", "it holds 0xC3 (only ASCII letters, digits, '-', '.', '_' and '~' are allowed)"),
        ("x\r", "it holds a control character (0x0D)"),
        ("", "it is empty"),
        (String(repeating: "p", count: 256), "it is 256 bytes, at most 255 allowed"),
    ])
    func pathSegmentsRefused(_ text: String, _ reason: String) {
        #expect(WireValue.pathSegmentProblem(text, maxBytes: WireValue.maxSegmentBytes)?.description == reason)
    }

    @Test func pathSegmentsAccepted() {
        for text in ["pushline-demo", "my_project.1~", "...", "a..b", "winback-2026"] {
            #expect(WireValue.pathSegmentProblem(text, maxBytes: 255) == nil, "\(text)")
        }
    }

    @Test func headerNames() {
        #expect(WireValue.headerNameProblem("apns-collapse-id") == nil)
        #expect(WireValue.headerNameProblem("bad name")?.description == "it holds 0x20, which a header name cannot hold")
        #expect(WireValue.headerNameProblem("x:y")?.description == "it holds ':', which a header name cannot hold")
        #expect(WireValue.headerNameProblem("a\nb")?.description == "it holds a control character (0x0A)")
        #expect(WireValue.headerNameProblem("")?.description == "it is empty")
    }
}

@Suite("Device addresses in URL paths")
struct TokenPathSegmentTests {
    /// Every byte the APNs and ADM rules accept is one the path-segment rule accepts, and their
    /// minimum lengths exclude `.` and `..`: a valid token is always a safe path segment.
    @Test func tokenAlphabetsAreInsideThePathSegmentRule() {
        for b in UInt8.min...UInt8.max {
            let one = Array(repeating: b, count: 16)
            let accepted = one.withUnsafeBytes { DeviceTokenRules.validateADM($0) == nil }
            if accepted {
                #expect(one.withUnsafeBytes { WireValue.pathSegmentProblem($0, maxBytes: 2048) } == nil, "ADM byte \(b)")
            }
            let apns = Array(repeating: b, count: 64)
            if apns.withUnsafeBytes({ DeviceTokenRules.validateAPNs($0) == nil }) {
                #expect(apns.withUnsafeBytes { WireValue.pathSegmentProblem($0, maxBytes: 200) } == nil, "APNs byte \(b)")
            }
        }
        #expect(DeviceTokenRules.admLength.lowerBound > 2 && DeviceTokenRules.apnsLength.lowerBound > 2)
    }

    /// A configured URL names its resource as written: no '.' or '..' path segment, however
    /// spelled (servers decode %2e before they resolve).
    @Test(arguments: [
        ("https://hooks.example.com/sms/..", ".."),
        ("https://hooks.example.com/sms/../admin", ".."),
        ("https://hooks.example.com/./sms", "."),
        ("https://hooks.example.com/sms/%2e%2E?x=1", "%2e%2E"),
        ("https://hooks.example.com/sms/.%2e#f", ".%2e"),
        ("https://hooks.example.com/a/%2E/b", "%2E"),
    ])
    func dotSegmentsInAURLPathAreFound(_ url: String, _ segment: String) {
        #expect(WireValue.dotSegment(inURL: url) == segment)
    }

    @Test(arguments: [
        "https://hooks.example.com/sms", "https://hooks.example.com/sms/", "https://hooks.example.com",
        "https://hooks.example.com/...", "https://hooks.example.com/v1.2/..x", "https://hooks.example.com/a?path=/../b",
        "https://hooks.example.com/a#/..", "https://hooks.example.com/%2e%2e%2e", "https://hooks.example.com/%2", "not a url",
    ])
    func urlsWithoutDotSegmentsPass(_ url: String) {
        #expect(WireValue.dotSegment(inURL: url) == nil)
    }
}

