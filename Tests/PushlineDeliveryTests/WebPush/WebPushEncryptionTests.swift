import Crypto
import Foundation
import PushlineDelivery
import PushlineTestSupport
import Testing

@Suite("Web Push encryption (RFC 8291)")
struct WebPushEncryptionTests {
    // RFC 8291 section 5 and Appendix A.
    static let plaintext = "When I grow up, I want to be a watermelon"
    static let senderPrivate = "yfWPiYE-n46HLnH0KqZOF1fJJU3MYrct3AELtAQ-oRw"
    static let receiverPrivate = "q1dXpw3UpT5VOmu_cf_v6ih07Aems3njxI-JWgLcM94"
    static let receiverPublic = "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4"
    static let authSecret = "BTBZMqHH6r4Tts7J_aSIgg"
    static let salt = "DGv6ra1nlYgDCS1FRnbzlw"
    static let body = "DGv6ra1nlYgDCS1FRnbzlwAAEABBBP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A_yl95bQpu6cVPTpK4Mqgkf1CXztLVBSt2Ks3oZwbuwXPXLWyouBWLVWGNWQexSgSxsj_Qulcy4a-fN"

    static func b(_ text: String) throws -> [UInt8] { try #require(WebPushCheck.bytes(base64url: text)) }

    @Test("RFC 8291's example, byte for byte: the same keys and salt give the RFC's body")
    func rfcExample() throws {
        let sender = try P256.KeyAgreement.PrivateKey(rawRepresentation: try Self.b(Self.senderPrivate))
        var output: [UInt8] = []
        try Array(Self.plaintext.utf8).withUnsafeBytes { plaintext in
            try WebPushEncryption.seal(
                plaintext, p256dh: try Self.b(Self.receiverPublic), auth: try Self.b(Self.authSecret), senderKey: sender,
                salt: try Self.b(Self.salt), into: &output
            )
        }
        #expect(output == (try Self.b(Self.body)))
    }

    @Test("a fresh key and salt per message; the header says rs 4096 and a 65-byte key id; the size is plaintext + 103")
    func freshPerMessage() throws {
        let receiver = P256.KeyAgreement.PrivateKey()
        let p256dh = Array(receiver.publicKey.x963Representation)
        let auth = [UInt8](repeating: 7, count: 16)
        var first: [UInt8] = [], second: [UInt8] = []
        let message = Array(#"{"title":"Hi"}"#.utf8)
        try message.withUnsafeBytes { try WebPushEncryption.seal($0, p256dh: p256dh, auth: auth, into: &first) }
        try message.withUnsafeBytes { try WebPushEncryption.seal($0, p256dh: p256dh, auth: auth, into: &second) }
        #expect(first.count == message.count + 103)
        #expect(Array(first[16..<21]) == [0, 0, 0x10, 0, 65])
        #expect(first[0..<16] != second[0..<16], "the salt is fresh")
        #expect(first[21..<86] != second[21..<86], "the ephemeral key is fresh")
    }

    @Test("refused: a p256dh that is not a curve point, an auth secret of the wrong size, more than 3993 bytes")
    func refusals() throws {
        let auth = [UInt8](repeating: 1, count: 16)
        let point = Array(P256.KeyAgreement.PrivateKey().publicKey.x963Representation)
        var notOnCurve = point
        notOnCurve[64] ^= 0x01
        var sink: [UInt8] = []
        let short = Array("{}".utf8)
        #expect(throws: WebPushEncryption.Failure.self) {
            try short.withUnsafeBytes { try WebPushEncryption.seal($0, p256dh: notOnCurve, auth: auth, into: &sink) }
        }
        #expect(throws: WebPushEncryption.Failure.self) {
            try short.withUnsafeBytes { try WebPushEncryption.seal($0, p256dh: point, auth: Array(auth.prefix(15)), into: &sink) }
        }
        let fits = [UInt8](repeating: UInt8(ascii: "a"), count: 3993)
        try fits.withUnsafeBytes { try WebPushEncryption.seal($0, p256dh: point, auth: auth, into: &sink) }
        #expect(sink.count == 4096, "3993 bytes fill the 4096-byte record exactly")
        let tooLong = [UInt8](repeating: UInt8(ascii: "a"), count: 3994)
        do {
            try tooLong.withUnsafeBytes { try WebPushEncryption.seal($0, p256dh: point, auth: auth, into: &sink) }
            Issue.record("3994 bytes were sealed")
        } catch let failure as WebPushEncryption.Failure {
            #expect(failure.reason == "payload_too_large")
        }
        #expect(sink.count == 4096, "nothing is appended on failure")
    }

    @Test("an independent decryptor (Python cryptography) opens what was sealed, keys given as the audience writes them",
          .enabled(if: WebPushCheck.isAvailable, "needs /usr/bin/python3 with the cryptography package (apt install python3-cryptography)"))
    func independentDecryption() throws {
        let receiver = P256.KeyAgreement.PrivateKey()
        var auth = [UInt8](repeating: 0, count: 16)
        for i in auth.indices { auth[i] = UInt8.random(in: 0...255) }
        let p256dhText = WebPushCheck.base64url(receiver.publicKey.x963Representation)
        // The audience may pad its base64url.
        let authText = WebPushCheck.base64url(auth) + "=="
        for message in [#"{"title":"Hé 👋","body":"\u0000 and \"quotes\""}"#, "", String(repeating: "x", count: 3993)] {
            var body: [UInt8] = []
            try Array(message.utf8).withUnsafeBytes { plaintext in
                try Array(p256dhText.utf8).withUnsafeBytes { p256dh in
                    try Array(authText.utf8).withUnsafeBytes { authBytes in
                        try WebPushEncryption.seal(plaintext, p256dhText: p256dh, authText: authBytes, into: &body)
                    }
                }
            }
            let result = try WebPushCheck.run([
                "decrypt", WebPushCheck.base64url(receiver.rawRepresentation), WebPushCheck.base64url(auth), WebPushCheck.base64url(body),
            ])
            #expect(result.status == 0, "\(result.stderr)")
            #expect(Array(result.stdout) == Array(message.utf8))
        }
    }
}
