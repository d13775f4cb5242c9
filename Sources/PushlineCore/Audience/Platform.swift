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
        // Compared as bytes: this runs for every device of the audience.
        if bytes.elementsEqual("ios".utf8) { self = .ios }
        else if bytes.elementsEqual("android".utf8) { self = .android }
        else if bytes.elementsEqual("web".utf8) { self = .web }
        else if bytes.elementsEqual("amazon".utf8) { self = .amazon }
        else { return nil }
    }
}

/// A push provider: who receives the request.
public enum Provider: String, Sendable, CaseIterable, Hashable, Comparable {
    case apns, fcm, webpush, adm

    public init?(utf8 bytes: UnsafeRawBufferPointer) {
        if bytes.elementsEqual("apns".utf8) { self = .apns }
        else if bytes.elementsEqual("fcm".utf8) { self = .fcm }
        else if bytes.elementsEqual("webpush".utf8) { self = .webpush }
        else if bytes.elementsEqual("adm".utf8) { self = .adm }
        else { return nil }
    }

    public static func < (lhs: Provider, rhs: Provider) -> Bool {
        allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
    }
}
