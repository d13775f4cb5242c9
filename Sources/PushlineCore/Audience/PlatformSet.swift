/// A set of platforms as one bit each: what a campaign targets, checked for every device of the
/// audience. `Set<Platform>` hashed the platform's raw-value string on every lookup.
public struct PlatformSet: Sendable, Equatable {
    private var bits: UInt8

    public static let all = PlatformSet(Platform.allCases)

    public init() { bits = 0 }

    public init(_ platforms: some Sequence<Platform>) {
        bits = 0
        for platform in platforms { insert(platform) }
    }

    public func contains(_ platform: Platform) -> Bool {
        bits & (1 << platform.ordinal) != 0
    }

    public mutating func insert(_ platform: Platform) {
        bits |= 1 << platform.ordinal
    }
}
