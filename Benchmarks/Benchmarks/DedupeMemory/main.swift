// Dedupe's memory for N distinct device tokens: N APNs-like tokens (64 hex characters, distinct
// by construction) are digested and inserted into the run's `TokenDigestSet`, then 1,000,000 of
// them again (each must be found); prints the table's size and the process's peak RSS.
//
// Usage: DedupeMemory [TOKENS] (50000000). scripts/benchmark-dedupe builds and runs it.
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

let tokens = CommandLine.arguments.count > 1 ? Int(CommandLine.arguments[1]) ?? 50_000_000 : 50_000_000
let hex = Array("0123456789abcdef".utf8)

/// Token `i`: its 64-bit index scrambled (a bijection, so tokens are distinct) as 16 hex
/// characters, repeated to 64 like an APNs token.
func token(_ i: Int, into buffer: inout [UInt8]) {
    var x = UInt64(i) &* 0x9E37_79B9_7F4A_7C15
    x ^= x >> 29
    for position in 0..<16 {
        let nibble = hex[Int((x >> UInt64(4 * position)) & 0xF)]
        buffer[position] = nibble
        buffer[16 + position] = nibble
        buffer[32 + position] = nibble
        buffer[48 + position] = nibble
    }
}

func peakRSSBytes() -> Int {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Int(usage.ru_maxrss) * 1024
}

let baseline = peakRSSBytes()
var set = TokenDigestSet()
var buffer = [UInt8](repeating: 0, count: 64)
var started = timespec()
clock_gettime(CLOCK_MONOTONIC, &started)
var wronglyDuplicate = 0
for i in 0..<tokens {
    token(i, into: &buffer)
    let digest = buffer.withUnsafeBytes { TokenDigest.digest(channel: 0, token: $0) }
    if !set.insert(digest) { wronglyDuplicate += 1 }
}
var missed = 0
for i in stride(from: 0, to: tokens, by: max(1, tokens / 1_000_000)) {
    token(i, into: &buffer)
    if buffer.withUnsafeBytes({ set.insert(TokenDigest.digest(channel: 0, token: $0)) }) { missed += 1 }
}
var ended = timespec()
clock_gettime(CLOCK_MONOTONIC, &ended)
let seconds = Double(ended.tv_sec - started.tv_sec) + Double(ended.tv_nsec - started.tv_nsec) / 1e9
print("tokens: \(tokens), remembered: \(set.count), colliding digests: \(wronglyDuplicate), repeats not found: \(missed)")
let tableBytes: Int = set.capacity * 8
let tenthsPerToken: Int = tableBytes * 10 / max(1, tokens)
let peak: Int = peakRSSBytes()
let tenthsOfSeconds = Int(seconds * 10)
print("table: \(set.capacity) slots = \(tableBytes / 1_048_576) MiB (\(tenthsPerToken / 10).\(tenthsPerToken % 10) bytes a token)")
print("peak RSS: \(peak / 1_048_576) MiB (\(baseline / 1_048_576) MiB at start); \(tenthsOfSeconds / 10).\(tenthsOfSeconds % 10) s")
