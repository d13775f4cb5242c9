import PushlineCore
import Testing

/// A worker indexes line after line into one `JSONTapeStorage`: every document must read exactly
/// as a freshly indexed one, whatever the storage held before (longer documents, refused texts),
/// and a document still held elsewhere must not change when the storage indexes the next line.
@Suite struct JSONTapeReuseTests {
    private func fresh(_ bytes: [UInt8]) -> Result<JSONDocument, JSONParseError> {
        Result { () throws(JSONParseError) in try JSONDocument(bytes: bytes, maxDepth: 16) }
    }

    private func reused(_ bytes: [UInt8], _ storage: inout JSONTapeStorage) -> Result<JSONDocument, JSONParseError> {
        Result { () throws(JSONParseError) in try JSONDocument(buffer: bytes, range: 0..<bytes.count, maxDepth: 16, reusing: &storage) }
    }

    private func written(_ document: JSONDocument) -> [UInt8] {
        var writer = JSONWriter(reservingCapacity: 256)
        writer.writeValue(document.root)
        return writer.bytes
    }

    /// Valid texts of every size (a 200,000-value array among them, past the storage's 65,536-entry
    /// keep limit, then small ones again), refused texts, and texts whose tape outgrows the
    /// estimate, in a random order.
    private func texts(_ g: inout SplitMix64) -> [[UInt8]] {
        var texts: [[UInt8]] = []
        for _ in 0..<300 {
            var writer = JSONWriter(reservingCapacity: 256)
            TestValue.random(&g).write(to: &writer)
            var bytes = writer.bytes
            if Int.random(in: 0..<5, using: &g) == 0, !bytes.isEmpty {
                // A damaged copy: a byte replaced or the text cut short.
                if Bool.random(using: &g) {
                    bytes[Int.random(in: 0..<bytes.count, using: &g)] = [UInt8(ascii: "]"), UInt8(ascii: "\""), 0xFF, UInt8(ascii: ",")].randomElement(using: &g)!
                } else {
                    bytes.removeLast(Int.random(in: 1...bytes.count, using: &g))
                }
            }
            texts.append(bytes)
        }
        let large = "[" + Array(repeating: "1", count: 200_000).joined(separator: ",") + "]"
        texts.insert(Array(large.utf8), at: 100)
        // Dense past 64 KiB: more values than the estimate for large texts, indexed again at the bound.
        let dense = "[" + Array(repeating: "[]", count: 40_000).joined(separator: ",") + "]"
        texts.insert(Array(dense.utf8), at: 200)
        texts.insert(Array(String(repeating: "[", count: 30_000).utf8), at: 250)
        return texts
    }

    @Test func everyDocumentReadsAsAFreshOne() {
        var g = SplitMix64(seed: 15)
        var storage = JSONTapeStorage()
        var compared = 0
        for text in texts(&g) {
            switch (fresh(text), reused(text, &storage)) {
            case (.success(let a), .success(let b)):
                #expect(a.valueCount == b.valueCount)
                #expect(written(a) == written(b))
                compared += 1
            case (.failure(let a), .failure(let b)):
                #expect(a == b)
            case (let a, let b):
                Issue.record("fresh \(a) but reused \(b) for \(text.count) bytes")
            }
        }
        #expect(compared > 200)
        // The 200,000-value array grew the storage; the short lines after it gave that back.
        #expect(storage.capacity <= 1 << 16)
    }

    @Test func aDocumentStillHeldKeepsItsIndex() throws {
        var storage = JSONTapeStorage()
        let first = Array(#"{"id":"c-1","devices":[{"platform":"ios"},{"platform":"android"}]}"#.utf8)
        let kept = try JSONDocument(buffer: first, range: 0..<first.count, reusing: &storage)
        let second = Array(#"[1,2,3,{"a":[true,false,null]}]"#.utf8)
        let next = try JSONDocument(buffer: second, range: 0..<second.count, reusing: &storage)
        #expect(kept.root.member("id")?.stringValue == "c-1")
        #expect(kept.root.member("devices")?.count == 2)
        #expect(kept.valueCount == 11)
        #expect(next.valueCount == 10)
        #expect(String(decoding: written(kept), as: UTF8.self) == #"{"id":"c-1","devices":[{"platform":"ios"},{"platform":"android"}]}"#)
    }

    /// A document reads its text through a pointer to its buffer's elements, set when it is
    /// indexed: what it reads must stay its own text when the caller writes to its copy of the
    /// buffer (the write copies it), when the caller's copy is gone, and when the storage indexes
    /// another buffer afterwards.
    @Test func aDocumentReadsItsOwnTextWhateverBecomesOfTheCallersBuffer() throws {
        var storage = JSONTapeStorage()
        var batch = Array(#"{"title":"Hi Chloé","n":1} {"title":"other"}"#.utf8)
        let first = try JSONDocument(buffer: batch, range: 0..<27, reusing: &storage)
        // The caller reuses its buffer in place: the document keeps the bytes it was given.
        for i in batch.indices { batch[i] = UInt8(ascii: "x") }
        #expect(first.root.member("title")?.stringValue == "Hi Chloé")
        #expect(String(decoding: written(first), as: UTF8.self) == #"{"title":"Hi Chloé","n":1}"#)

        // Only the document holds its buffer now.
        let held: JSONDocument = try {
            let local = Array(#"["only", "here"]"#.utf8)
            return try JSONDocument(buffer: local, range: 0..<local.count)
        }()
        #expect(held.root[1]?.stringValue == "here")

        // The storage, free again, indexes a longer buffer: the new document reads the new text.
        let firstTitle = first.root.member("title")?.stringValue
        _ = consume first
        let next = Array(#"{"title":"a title in a buffer longer than the first one's","n":2}"#.utf8)
        let second = try JSONDocument(buffer: next, range: 0..<next.count, reusing: &storage)
        #expect(firstTitle == "Hi Chloé")
        #expect(second.root.member("title")?.stringValue == "a title in a buffer longer than the first one's")
        #expect(String(decoding: written(second), as: UTF8.self) == String(decoding: next, as: UTF8.self))
    }
}
