/// Credential types show no stored properties to reflection (`dump`, `Mirror`, debuggers'
/// summaries built on them): their `description` is all there is to see.
extension APNsSigningKey: CustomReflectable {
    public var customMirror: Mirror { Mirror(self, children: ["keyID": keyID, "teamID": teamID]) }
}

extension APNsProviderToken: CustomReflectable {
    public var customMirror: Mirror { Mirror(self, children: ["generation": generation, "issuedAtUnixTime": issuedAtUnixTime]) }
}

extension FCMServiceAccount: CustomReflectable {
    public var customMirror: Mirror {
        Mirror(self, children: ["projectID": projectID, "clientEmail": clientEmail, "privateKeyID": privateKeyID])
    }
}

extension OAuthAccessToken: CustomReflectable {
    public var customMirror: Mirror { Mirror(self, children: ["generation": generation]) }
}

extension OAuthTokenRequest: CustomReflectable {
    public var customMirror: Mirror { Mirror(self, children: ["url": url]) }
}

extension OAuthTokenResponse: CustomReflectable {
    public var customMirror: Mirror { Mirror(self, children: ["expiresIn": expiresIn]) }
}
