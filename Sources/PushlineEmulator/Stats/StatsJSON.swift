import Foundation

enum StatsJSON {
    static func encode(_ stats: EmulatorStats) -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        // Encoding plain counters and strings cannot fail; an empty object keeps the endpoint
        // answering should it ever.
        return (try? Array(encoder.encode(stats))) ?? Array("{}".utf8)
    }
}
