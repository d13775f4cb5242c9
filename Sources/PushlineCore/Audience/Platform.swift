/// A device type as the audience and the pipeline's `device_types` name it.
public enum Platform: String, Sendable, CaseIterable, Hashable {
    case ios, android, web, amazon

    /// The provider a device of this platform goes through unless the record names one.
    public var defaultProvider: Provider {
        switch self {
        case .ios: .apns
        case .android: .fcm
        case .web: .webpush
        case .amazon: .adm
        }
    }

    /// Providers that can reach this platform (iOS through FCM is common).
    public var allowedProviders: Set<Provider> {
        switch self {
        case .ios: [.apns, .fcm]
        case .android: [.fcm]
        case .web: [.webpush, .fcm]
        case .amazon: [.adm]
        }
    }

    public init?(utf8 bytes: UnsafeRawBufferPointer) {
        for platform in Platform.allCases where platform.rawValue.utf8.elementsEqual(bytes) {
            self = platform
            return
        }
        return nil
    }
}

/// A push provider: who receives the request.
public enum Provider: String, Sendable, CaseIterable, Hashable, Comparable {
    case apns, fcm, webpush, adm

    public init?(utf8 bytes: UnsafeRawBufferPointer) {
        for provider in Provider.allCases where provider.rawValue.utf8.elementsEqual(bytes) {
            self = provider
            return
        }
        return nil
    }

    public static func < (lhs: Provider, rhs: Provider) -> Bool {
        allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
    }
}
