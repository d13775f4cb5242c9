import PushlineCore
import Testing

@Suite("Audience shards: --shard I/N and the recipient hash")
struct AudienceShardTests {
    /// FNV-1a 64 test vectors from the algorithm's reference (draft-eastlake-fnv, isthe.com/chongo).
    @Test(arguments: [("", 0xcbf2_9ce4_8422_2325 as UInt64), ("a", 0xaf63_dc4c_8601_ec8c), ("foobar", 0x8594_4171_f739_67e8)])
    func theHashIsFNV1a64(text: String, expected: UInt64) {
        let hash = Array(text.utf8).withUnsafeBytes { AudienceShard.fnv1a64($0) }
        #expect(hash == expected)
    }

    @Test func parsesIndexOverCount() throws {
        let shard = try AudienceShard(parsing: "2/5")
        #expect(shard.index == 2 && shard.count == 5)
        #expect(shard.description == "2/5")
    }

    @Test(arguments: ["5/5", "-1/4", "1/0", "a/b", "1", "1/2/3", "", "/4", "1/", "9999999/10000000", "0/100001"])
    func refusesWhatIsNotAShard(text: String) {
        #expect(throws: AudienceShard.Invalid.self) { try AudienceShard(parsing: text) }
    }

    @Test func takesTheIndexFromTheFirstSchedulerVariableSet() throws {
        let kubernetes = try AudienceShard(count: 4, environment: ["JOB_COMPLETION_INDEX": "3", "SLURM_ARRAY_TASK_ID": "1"])
        #expect(kubernetes.index == 3)
        #expect(try AudienceShard(count: 4, environment: ["AWS_BATCH_JOB_ARRAY_INDEX": "2"]).index == 2)
        #expect(try AudienceShard(count: 4, environment: ["SLURM_ARRAY_TASK_ID": "1"]).index == 1)
        #expect(throws: AudienceShard.Invalid.self) { try AudienceShard(count: 4, environment: [:]) }
        #expect(throws: AudienceShard.Invalid.self) { try AudienceShard(count: 4, environment: ["SLURM_ARRAY_TASK_ID": "4"]) }
        #expect(throws: AudienceShard.Invalid.self) { try AudienceShard(count: 4, environment: ["SLURM_ARRAY_TASK_ID": "x\u{1B}[2J"]) }
    }

    @Test func everyRecipientHasExactlyOneShard() throws {
        let shards = try (0..<7).map { try AudienceShard(index: $0, count: 7) }
        var sizes = [Int](repeating: 0, count: 7)
        for n in 0..<7000 {
            let owners = Array("c-\(n)".utf8).withUnsafeBytes { id in shards.filter { $0.owns(recipientID: id) } }
            #expect(owners.count == 1)
            if let owner = owners.first { sizes[owner.index] += 1 }
        }
        // A hash that spreads: no shard far from 1,000 of 7,000.
        #expect(sizes.allSatisfy { (800...1200).contains($0) }, "\(sizes)")
        #expect((0..<7).map { n in shards.filter { $0.owns(lineWithoutID: n) }.count } == Array(repeating: 1, count: 7))
    }
}
