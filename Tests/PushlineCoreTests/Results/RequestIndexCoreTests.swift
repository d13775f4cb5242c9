import PushlineCore
import Testing

@Suite("Request index types")
struct RequestIndexCoreTests {
    @Test func rangesAreCheckedNotTrapped() {
        #expect(ByteRange(0, 10) == ByteRange(offset: 0, length: 10))
        #expect(ByteRange(5, 4) == nil)
        #expect(ByteRange(-1, 4) == nil)
        #expect(ByteRange(0, Int(UInt32.max)) != nil)
        #expect(ByteRange(0, Int(UInt32.max) + 1) == nil)
        #expect(MemoryLayout<RequestEntry>.size <= 48, "entries stay small and plain")
    }

    @Test func headerBlocksReadBackAndStopAtMalformedItems() {
        var w = JSONWriter(reservingCapacity: 64)
        let a = Array("winback-c-1".utf8), b = Array("BNcR".utf8)
        let stored = [
            a.withUnsafeBytes { RequestHeaderBlock.append(.apnsCollapseID, value: $0, to: &w) },
            b.withUnsafeBytes { RequestHeaderBlock.append(.webPushP256dh, value: $0, to: &w) },
        ]
        #expect(stored == [true, true])
        let block = ByteRange(0, w.count)!
        var items: [(RequestHeaderID, String)] = []
        w.bytes.withUnsafeBytes { arena in
            RequestHeaderBlock.forEach(in: arena, block: block) { items.append(($0, String(decoding: $1, as: UTF8.self))) }
        }
        #expect(items.map(\.0) == [.apnsCollapseID, .webPushP256dh] && items.map(\.1) == ["winback-c-1", "BNcR"])
        // A block cut short (or a range past the arena) yields the whole items only.
        var count = 0
        w.bytes.withUnsafeBytes { arena in
            RequestHeaderBlock.forEach(in: arena, block: ByteRange(0, w.count - 1)!) { _, _ in count += 1 }
            RequestHeaderBlock.forEach(in: arena, block: ByteRange(0, w.count + 5)!) { _, _ in count += 100 }
        }
        #expect(count == 1)
        let long = [UInt8](repeating: 0x41, count: RequestHeaderBlock.maxValueBytes + 1)
        let before = w.count
        let storedLong = long.withUnsafeBytes { RequestHeaderBlock.append(.apnsCollapseID, value: $0, to: &w) }
        #expect(!storedLong && w.count == before)
        #expect(RequestHeaderID.apnsCollapseID.httpName == "apns-collapse-id" && RequestHeaderID.webPushAuth.httpName == nil)
    }

    @Test func urlsSplitAtTheirPath() {
        #expect(RouteURL.fixed("https://hooks.example.com:8443/a/b?x=1").origin == "https://hooks.example.com:8443")
        #expect(RouteURL.fixed("https://hooks.example.com:8443/a/b?x=1").pathBeforeTarget == "/a/b?x=1")
        #expect(RouteURL.fixed("https://h").origin == "https://h" && RouteURL.fixed("https://h").pathBeforeTarget == "")
        let odd = RouteURL.fixed("no-scheme/x")
        #expect(odd.origin + odd.pathBeforeTarget == "no-scheme/x")
    }
}
