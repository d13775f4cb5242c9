#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Byte-level text helpers: Liquid strings are UTF-8 bytes, counted in Unicode scalars so that no
/// operation ever splits a multi-byte sequence.
enum LiquidText {
    @inline(__always)
    static func isContinuation(_ byte: UInt8) -> Bool { byte & 0xC0 == 0x80 }

    static func characterCount<C: Collection<UInt8>>(_ bytes: C) -> Int {
        var n = 0
        for b in bytes where !isContinuation(b) { n += 1 }
        return n
    }

    static func characterCount(_ bytes: UnsafeRawBufferPointer) -> Int {
        var n = 0
        for b in bytes where !isContinuation(b) { n += 1 }
        return n
    }

    /// Byte offsets where each scalar starts, plus the end offset.
    static func scalarBoundaries(_ bytes: [UInt8]) -> [Int] {
        var offsets: [Int] = []
        offsets.reserveCapacity(bytes.count + 1)
        for (i, b) in bytes.enumerated() where !isContinuation(b) { offsets.append(i) }
        offsets.append(bytes.count)
        return offsets
    }

    static func equals(_ bytes: UnsafeRawBufferPointer, _ text: StaticString) -> Bool {
        guard bytes.count == text.utf8CodeUnitCount else { return false }
        guard let base = bytes.baseAddress else { return true }
        return memcmp(base, text.utf8Start, bytes.count) == 0
    }

    @inline(__always)
    static func isWhitespace(_ b: UInt8) -> Bool {
        b == 0x20 || b == 0x09 || b == 0x0A || b == 0x0D || b == 0x0B || b == 0x0C
    }

    static func string(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

    /// Finds `needle` in `haystack` from `start`; nil when absent. An empty needle matches at `start`.
    /// Linear time: a naive scan is quadratic on hostile text (`aaaa…a` searched for `aa…ab`), so
    /// needles longer than a few bytes use Knuth–Morris–Pratt.
    static func find(_ needle: [UInt8], in haystack: [UInt8], from start: Int = 0) -> Int? {
        if needle.isEmpty { return start <= haystack.count ? start : nil }
        guard start >= 0, start < haystack.count, haystack.count - start >= needle.count else { return nil }
        let m = needle.count
        if m <= 4 {
            // At most 4 compares per position: linear already, and no table to allocate.
            var i = start
            let last = haystack.count - m
            while i <= last {
                if haystack[i] == needle[0] {
                    var j = 1
                    while j < m && haystack[i + j] == needle[j] { j += 1 }
                    if j == m { return i }
                }
                i += 1
            }
            return nil
        }
        let failure = failureTable(needle)
        var matched = 0
        for i in start..<haystack.count {
            while matched > 0 && haystack[i] != needle[matched] { matched = failure[matched - 1] }
            if haystack[i] == needle[matched] { matched += 1 }
            if matched == m { return i - m + 1 }
        }
        return nil
    }

    /// Knuth–Morris–Pratt failure table: for each prefix of `needle`, the length of its longest
    /// proper prefix that is also a suffix.
    private static func failureTable(_ needle: [UInt8]) -> [Int] {
        let m = needle.count
        var failure = [Int](repeating: 0, count: m)
        var k = 0
        for q in 1..<m {
            while k > 0 && needle[q] != needle[k] { k = failure[k - 1] }
            if needle[q] == needle[k] { k += 1 }
            failure[q] = k
        }
        return failure
    }

    /// The offset of the last occurrence of a non-empty `needle`, overlapping ones included.
    static func findLast(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        let m = needle.count
        guard m > 0, haystack.count >= m else { return nil }
        // Scanning backward, the first match found is the last one; the naive compare is at most
        // m per position, so long needles use the failure table as `find` does.
        if m <= 4 {
            var i = haystack.count - m
            while i >= 0 {
                var j = 0
                while j < m && haystack[i + j] == needle[j] { j += 1 }
                if j == m { return i }
                i -= 1
            }
            return nil
        }
        let failure = failureTable(needle)
        var last: Int? = nil
        var matched = 0
        for i in 0..<haystack.count {
            while matched > 0 && haystack[i] != needle[matched] { matched = failure[matched - 1] }
            if haystack[i] == needle[matched] { matched += 1 }
            if matched == m {
                last = i - m + 1
                matched = failure[m - 1]
            }
        }
        return last
    }

    static func appendDecimal(_ value: Int, to out: inout [UInt8]) {
        if value < 0 { out.append(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        let start = out.count
        repeat {
            out.append(UInt8(ascii: "0") + UInt8(magnitude % 10))
            magnitude /= 10
        } while magnitude > 0
        out[start...].reverse()
    }
}

