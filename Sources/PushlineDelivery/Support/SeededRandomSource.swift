public import PushlineCore

/// The deterministic random source the policies are tested with: they take any
/// `RandomNumberGenerator`, and a seeded one makes a retry schedule reproducible.
public typealias SeededRandomSource = SplitMix64
