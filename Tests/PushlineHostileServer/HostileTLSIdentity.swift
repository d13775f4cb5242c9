import Crypto
public import Foundation
import SwiftASN1
import X509

/// A self-signed P-256 certificate for 127.0.0.1 with a chosen validity (an expired one for
/// the expired-certificate test), its PEM written to a private temporary directory so a client
/// can name it as its CA file.
public struct HostileTLSIdentity: Sendable {
    public let certificatePEM: String
    let privateKeyPEM: String
    /// Where `certificatePEM` is written (the client's `caFile`).
    public let certificatePath: String
    let directory: String

    /// Valid from `notBefore` for `seconds`: a past window makes an expired certificate.
    public static func make(notBefore: Date = Date().addingTimeInterval(-60), seconds: TimeInterval = 86_400) throws -> HostileTLSIdentity {
        let key = P256.Signing.PrivateKey()
        let name = try DistinguishedName { CommonName("pushline hostile test server") }
        let extensions = try Certificate.Extensions {
            // Its own trust anchor: marked a CA, as `openssl req -x509` does, so OpenSSL takes it
            // from a CA file.
            Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
            Critical(KeyUsage(digitalSignature: true, keyCertSign: true))
            try ExtendedKeyUsage([.serverAuth])
            SubjectAlternativeNames([.ipAddress(ASN1OctetString(contentBytes: [127, 0, 0, 1]))])
            SubjectKeyIdentifier(hash: Certificate.PublicKey(key.publicKey))
        }
        let certificate = try Certificate(
            version: .v3,
            serialNumber: Certificate.SerialNumber(),
            publicKey: Certificate.PublicKey(key.publicKey),
            notValidBefore: notBefore,
            notValidAfter: notBefore.addingTimeInterval(seconds),
            issuer: name,
            subject: name,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: extensions,
            issuerPrivateKey: Certificate.PrivateKey(key)
        )
        let pem = try certificate.serializeAsPEM().pemString
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("pushline-hostile-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let path = directory.appendingPathComponent("cert.pem")
        try Data(pem.utf8).write(to: path)
        return HostileTLSIdentity(certificatePEM: pem, privateKeyPEM: key.pemRepresentation, certificatePath: path.path, directory: directory.path)
    }

    func remove() { try? FileManager.default.removeItem(atPath: directory) }
}
