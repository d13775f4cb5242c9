/// Bounds on a pipeline file, checked while it is read, before any tree is built or walked.
///
/// A pipeline is a few hundred bytes of hand-written YAML; these limits are far above any real one
/// and far below what could exhaust memory or the stack. Exceeding one is a diagnostic (exit 2).
public struct ConfigLimits: Sendable, Equatable {
    /// Largest pipeline file, in bytes.
    public var maxFileBytes: Int
    /// Deepest nesting of lists and mappings (the root mapping is depth 1). Every walk of the
    /// configuration tree (validation, compilation, destruction) recurses at most this deep.
    public var maxDepth: Int
    /// Most aliases (`*name`) in one document.
    public var maxAliases: Int
    /// Most nodes plus scalar bytes in the document with every alias expanded: what the walks
    /// after loading actually visit. An alias bomb (each level aliasing the one before it nine
    /// times) reaches this in a few levels.
    public var maxExpandedSize: Int

    public init(maxFileBytes: Int = 1 << 20, maxDepth: Int = 64, maxAliases: Int = 1_000, maxExpandedSize: Int = 4 << 20) {
        self.maxFileBytes = maxFileBytes
        self.maxDepth = maxDepth
        self.maxAliases = maxAliases
        self.maxExpandedSize = maxExpandedSize
    }

    public static let standard = ConfigLimits()
}
