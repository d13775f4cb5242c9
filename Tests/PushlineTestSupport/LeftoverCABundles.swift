import Foundation

/// The combined CA bundles process `pid` left with a name in the temporary directory (see
/// `TrustAnchors`): a run that was killed must leave none.
public func leftoverCABundles(of pid: Int32) -> [String] {
    let directory = ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
    let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
    return names.filter { $0.hasPrefix("pushline-ca-\(pid)-") }
}
