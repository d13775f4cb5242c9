/// The shared secrets of the state folder: ADM's client secret and the webhook signing secret.
/// Written once, without a trailing newline (a sender that reads the file whole gets exactly
/// the secret), and kept across restarts like the keys.
extension EmulatorStateDirectory {
    /// 64 hex digits (0600): `providers.adm.client_secret_file`.
    public var admClientSecretPath: String { path + "/adm-client-secret.txt" }
    /// `whsec_<base64 of 32 bytes>` (0600): the webhook channels' `secret_file`.
    public var webhookSecretPath: String { path + "/webhook-secret.txt" }

    /// Reads the ADM client secret, making and writing one when there is none.
    func prepareADMClientSecret() throws(EmulatorError) -> String {
        if let text = try StateFiles.read(admClientSecretPath) {
            let secret = Self.trimmed(text)
            guard secret.utf8.count == 64, secret.utf8.allSatisfy(Self.isHexDigit) else {
                throw .stateFile(admClientSecretPath, "not 64 hex digits (remove it to make a new one)")
            }
            return secret
        }
        let secret = EmulatorCredentials.hex((0..<32).map { _ in UInt8.random(in: .min ... .max) })
        try StateFiles.writeFile(admClientSecretPath, secret)
        return secret
    }

    /// Reads the webhook signing key, making and writing one when there is none.
    func prepareWebhookKey() throws(EmulatorError) -> [UInt8] {
        if let text = try StateFiles.read(webhookSecretPath) {
            guard let key = WebhookSecret.key(Self.trimmed(text)) else {
                throw .stateFile(webhookSecretPath, "not whsec_ and the base64 of a \(WebhookSecret.keyLengths.lowerBound) to \(WebhookSecret.keyLengths.upperBound) byte key (remove it to make a new one)")
            }
            return key
        }
        let key = WebhookSecret.generateKey()
        try StateFiles.writeFile(webhookSecretPath, WebhookSecret.text(key))
        return key
    }

    /// Without whitespace at either end: a person may have saved the file with a newline.
    private static func trimmed(_ text: String) -> String {
        var text = Substring(text)
        while let first = text.first, first.isWhitespace { text.removeFirst() }
        while let last = text.last, last.isWhitespace { text.removeLast() }
        return String(text)
    }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
            || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(byte)
    }
}
