import Foundation
import PushlineIO
import Testing

@Suite("Heap trim")
struct HeapTrimTests {
    /// Resident memory of this process, from /proc/self/statm (Linux).
    static func residentBytes() throws -> Int {
        let fields = try String(contentsOfFile: "/proc/self/statm", encoding: .utf8).split(separator: " ")
        return try #require(Int(fields[1])) * Int(sysconf(Int32(_SC_PAGESIZE)))
    }

    @Test(
        "free memory in the middle of the heap goes back to the kernel",
        .enabled(if: HeapTrim.isAvailable, "this C library has no malloc_trim (glibc only): nothing to trim")
    )
    func givesFreePagesBack() throws {
        // 64 MiB in 4 KiB blocks, touched; then every block but one in sixteen is freed. The
        // kept ones hold the free runs (60 KiB each) in the middle of the heap, where free()
        // does not give pages back: only a trim does.
        let blocks = (0..<16_384).map { _ in UnsafeMutableRawPointer.allocate(byteCount: 4096, alignment: 16) }
        for block in blocks { block.initializeMemory(as: UInt8.self, repeating: 1, count: 4096) }
        let kept = blocks.enumerated().filter { $0.offset % 16 == 15 }.map(\.element)
        defer { for block in kept { block.deallocate() } }
        for (index, block) in blocks.enumerated() where index % 16 != 15 { block.deallocate() }
        let before = try Self.residentBytes()
        #expect(HeapTrim.releaseFreeMemory())
        let after = try Self.residentBytes()
        // Other suites run alongside and allocate too: half of what was freed is enough to see.
        #expect(before - after >= 32 << 20, "resident \(before >> 20) MiB before, \(after >> 20) MiB after")
    }
}
