@testable import PushlineCore
import Testing

@Suite("Experiment split")
struct ExperimentSplitTests {
    /// The test vector of the SipHash paper (Aumasson and Bernstein, appendix A): key
    /// 00 01 … 0f, message 00 01 … 0e.
    @Test func sipHashMatchesThePapersVector() {
        let key: (UInt64, UInt64) = (0x0706_0504_0302_0100, 0x0f0e_0d0c_0b0a_0908)
        let message: [UInt8] = Array(0...14)
        let hash = message.withUnsafeBytes { SipHash24.hash($0, key: key) }
        #expect(hash == 0xa129_ca61_49be_45e5)
    }

    static func ids(_ n: Int, prefix: String = "customer-") -> [String] {
        (0..<n).map { prefix + String($0) }
    }

    /// Pearson's statistic of `observed` against `expected` shares of their total.
    static func chiSquare(_ observed: [Int], shares: [Double]) -> Double {
        let total = Double(observed.reduce(0, +))
        return zip(observed, shares).reduce(0) { sum, pair in
            let expected = total * pair.1
            return sum + (Double(pair.0) - expected) * (Double(pair.0) - expected) / expected
        }
    }

    /// 200,000 recipients, control 10 %, weights 1 : 2 : 1. Expected shares are worked out from
    /// the weights: 0.1, then 0.9 × (1/4, 2/4, 1/4). The statistic has 3 degrees of freedom; its
    /// 0.999 quantile is 16.27, so a correct split fails it for 1 set of ids in 1,000 (and the
    /// ids are fixed: the outcome never changes from run to run).
    @Test func proportionsFollowTheWeightsAndTheControl() {
        let split = ExperimentSplit(id: "winback-copy-1", control: 0.10, variants: [
            .init(name: "a", weight: 1), .init(name: "b", weight: 2), .init(name: "c", weight: 1),
        ])
        var observed = [0, 0, 0, 0]
        for id in Self.ids(200_000) {
            switch split.arm(recipientID: id) {
            case .control: observed[0] += 1
            case .variant(let i): observed[1 + i] += 1
            }
        }
        let shares = [0.10, 0.9 * 0.25, 0.9 * 0.5, 0.9 * 0.25]
        #expect(split.expectedShares == shares)
        let statistic = Self.chiSquare(observed, shares: shares)
        #expect(statistic < 16.27, "χ² = \(statistic) for \(observed)")
    }

    /// The arm says nothing about the shard: a 4 × 4 contingency table of (shard by the shards'
    /// FNV-1a, arm) passes Pearson's test of independence (9 degrees of freedom, 0.999 quantile
    /// 27.88).
    @Test func armsAreIndependentOfShards() throws {
        let split = ExperimentSplit(id: "exp", control: 0.25, variants: [.init(name: "a", weight: 1), .init(name: "b", weight: 1), .init(name: "c", weight: 1)])
        let shardCount = 4
        let shards = try (0..<shardCount).map { try AudienceShard(index: $0, count: shardCount) }
        var table = Array(repeating: Array(repeating: 0, count: 4), count: shardCount)
        for id in Self.ids(120_000, prefix: "u") {
            let shard = try #require(Array(id.utf8).withUnsafeBytes { raw in shards.firstIndex { $0.owns(recipientID: raw) } })
            table[shard][split.countIndex(of: split.arm(recipientID: id))] += 1
        }
        let total = Double(table.joined().reduce(0, +))
        var statistic = 0.0
        for row in 0..<shardCount {
            for column in 0..<4 {
                let expected = Double(table[row].reduce(0, +)) * Double(table.map { $0[column] }.reduce(0, +)) / total
                statistic += (Double(table[row][column]) - expected) * (Double(table[row][column]) - expected) / expected
            }
        }
        #expect(statistic < 27.88, "χ² = \(statistic) for \(table)")
    }

    @Test func theSameIdsGiveTheSameSplitAndAnotherIdAnother() {
        let variants: [ExperimentSplit.Variant] = [.init(name: "a", weight: 1), .init(name: "b", weight: 1)]
        let one = ExperimentSplit(id: "exp-1", control: 0.1, variants: variants)
        let again = ExperimentSplit(id: "exp-1", control: 0.1, variants: variants)
        let other = ExperimentSplit(id: "exp-2", control: 0.1, variants: variants)
        let ids = Self.ids(10_000)
        let first = ids.map { one.arm(recipientID: $0) }
        #expect(ids.map { again.arm(recipientID: $0) } == first)
        // A new id draws a new split: about half the variant recipients change variant.
        let moved = zip(ids.map { other.arm(recipientID: $0) }, first).filter { $0 != $1 }.count
        #expect(moved > 4_000 && moved < 6_000, "\(moved) of 10,000 moved")
    }

    /// A number id and a string id hash their bytes as the shards do: "42" as text and 42 as a
    /// number land in the same arm; `countIndex` puts the control after the variants.
    @Test func armsByIndexAndName() {
        let split = ExperimentSplit(id: "x", control: 0.5, variants: [.init(name: "left", weight: 1), .init(name: "right", weight: 1)])
        #expect(split.countIndex(of: .control) == 2)
        #expect(split.countIndex(of: .variant(1)) == 1)
        #expect(split.name(of: .control) == "control" && split.name(of: .variant(0)) == "left")
        let noControl = ExperimentSplit(id: "x", control: 0, variants: [.init(name: "a", weight: 1), .init(name: "b", weight: 3)])
        #expect(!Self.ids(20_000).contains { noControl.arm(recipientID: $0) == .control })
    }

    /// The id in an audience line: a string by its unescaped bytes (`"c\u002d7"` is `c-7`), a
    /// number as written (`42` hashes as `"42"`, `42.0` as `"42.0"`), as the shards take them.
    @Test func audienceIDsHashAsTheShardsRead() throws {
        let split = ExperimentSplit(id: "ids", control: 0.3, variants: [.init(name: "a", weight: 1), .init(name: "b", weight: 1)])
        func arm(_ line: String) throws -> ExperimentSplit.Arm {
            let document = try JSONDocument(bytes: Array(line.utf8))
            return split.arm(recipient: try #require(document.root.member("id")))
        }
        for text in ["c-7", "42", "42.0", "Zoë", ""] {
            #expect(try arm(#"{"id":"\#(text)"}"#) == split.arm(recipientID: text), "\(text)")
        }
        #expect(try arm(#"{"id":"c\u002d7"}"#) == split.arm(recipientID: "c-7"))
        #expect(try arm(#"{"id":42}"#) == split.arm(recipientID: "42"))
        #expect(try arm(#"{"id":42.0}"#) == split.arm(recipientID: "42.0"))
        // Across many ids, the string and the number spellings agree every time.
        for n in 0..<2_000 {
            #expect(try arm(#"{"id":\#(n)}"#) == arm(#"{"id":"\#(n)"}"#))
        }
    }
}
