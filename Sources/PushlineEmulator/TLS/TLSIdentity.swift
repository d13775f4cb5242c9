import Crypto
public import Foundation
import SwiftASN1
import X509

/// The emulator's server certificate: self-signed, P-256, with subject alternative names for
/// 127.0.0.1 and localhost, valid for a bounded time. A client trusts it by naming its PEM as
/// `ca_file` (curl's `--cacert`).
public struct TLSIdentity: Sendable, CustomStringConvertible {
    /// The certificate as PEM: what `ca_file` names.
    public let certificatePEM: String
    /// The private key as PKCS#8 PEM.
    let privateKeyPEM: String
    public let notValidAfter: Date

    /// Loads a certificate and key written by `write(certificatePath:keyPath:)`.
    public init(certificatePEM: String, privateKeyPEM: String) throws(EmulatorError) {
        let certificate: Certificate
        do {
            certificate = try Certificate(pemEncoded: certificatePEM)
        } catch {
            throw .invalidConfiguration("the emulator certificate is not a PEM certificate")
        }
        let key: P256.Signing.PrivateKey
        do {
            key = try P256.Signing.PrivateKey(pemRepresentation: privateKeyPEM)
        } catch {
            throw .invalidConfiguration("the emulator certificate key is not a PEM P-256 private key")
        }
        guard certificate.publicKey == Certificate.PublicKey(key.publicKey) else {
            throw .invalidConfiguration("the emulator certificate and key do not belong together")
        }
        self.certificatePEM = certificatePEM
        self.privateKeyPEM = privateKeyPEM
        self.notValidAfter = certificate.notValidAfter
    }

    public static let defaultValidity: TimeInterval = 30 * 86_400
    public static let maxValidity: TimeInterval = 825 * 86_400

    /// A fresh key and self-signed certificate valid from a minute ago for `validity` seconds.
    public static func generate(validity: TimeInterval = defaultValidity, now: Date = Date()) throws(EmulatorError) -> TLSIdentity {
        guard validity >= 60, validity <= maxValidity else {
            throw .invalidConfiguration("certificate validity must be between 60 seconds and 825 days; got \(validity) s")
        }
        let key = P256.Signing.PrivateKey()
        do {
            let name = try DistinguishedName {
                OrganizationName("Pushline")
                CommonName("Pushline provider emulator")
            }
            let extensions = try Certificate.Extensions {
                // Self-signed: the certificate is its own trust anchor, so it is marked as a CA
                // (as `openssl req -x509` does); OpenSSL then accepts it from a CA file.
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                Critical(KeyUsage(digitalSignature: true, keyCertSign: true))
                try ExtendedKeyUsage([.serverAuth])
                SubjectAlternativeNames([
                    .dnsName("localhost"),
                    .ipAddress(ASN1OctetString(contentBytes: [127, 0, 0, 1])),
                ])
                SubjectKeyIdentifier(hash: Certificate.PublicKey(key.publicKey))
            }
            let certificate = try Certificate(
                version: .v3,
                serialNumber: Certificate.SerialNumber(),
                publicKey: Certificate.PublicKey(key.publicKey),
                notValidBefore: now.addingTimeInterval(-60),
                notValidAfter: now.addingTimeInterval(validity),
                issuer: name,
                subject: name,
                signatureAlgorithm: .ecdsaWithSHA256,
                extensions: extensions,
                issuerPrivateKey: Certificate.PrivateKey(key)
            )
            let pem = try certificate.serializeAsPEM().pemString
            return try TLSIdentity(certificatePEM: pem, privateKeyPEM: key.pemRepresentation)
        } catch let error as EmulatorError {
            throw error
        } catch {
            throw .startFailed("could not make the emulator certificate: \(error)")
        }
    }

    /// The key stays out of every description.
    public var description: String { "TLSIdentity(self-signed, valid until \(notValidAfter), key redacted)" }
}
