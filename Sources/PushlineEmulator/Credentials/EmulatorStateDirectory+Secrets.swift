/// The shared secrets of the state folder: ADM's client secret. Written once, without a trailing
/// newline (a sender that reads the file whole gets exactly the secret), and kept across restarts
/// like the keys.
extension EmulatorStateDirectory {
    /// 64 hex digits (0600): `providers.adm.client_secret_file`.
    public var admClientSecretPath: String { path + "/adm-client-secret.txt" }

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
