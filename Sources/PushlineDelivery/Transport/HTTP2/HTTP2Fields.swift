internal import CNGHTTP2

/// Constant header lines (a route's, a credential's) laid out once as HTTP/2 fields: names
/// lower-cased (HTTP/2 requires it), connection-specific lines and `host` left out (RFC 9113
/// §8.2.2; `:authority` says the host). Every request that shares the lines points its fields
/// here; nghttp2 copies them when the request is submitted.
final class HTTP2FieldBlock {
    /// The lines this block was made from: held, so their identity cannot be reused while the
    /// block is cached under it.
    let lines: TransportHeaderLines
    private let storage: UnsafeMutablePointer<UInt8>
    private let spans: [(name: Int, nameLength: Int, value: Int, valueLength: Int)]

    var count: Int { spans.count }

    init(_ lines: TransportHeaderLines) {
        self.lines = lines
        var bytes: [UInt8] = []
        var spans: [(name: Int, nameLength: Int, value: Int, valueLength: Int)] = []
        for line in lines.lines {
            let utf8 = Array(line.utf8)
            guard let colon = utf8.firstIndex(of: UInt8(ascii: ":")), colon > 0 else { continue }
            let name = utf8[..<colon].map { (0x41...0x5A).contains($0) ? $0 | 0x20 : $0 }
            switch String(decoding: name, as: UTF8.self) {
            case "host", "connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade", "content-length": continue
            default: break
            }
            var valueStart = colon + 1
            while valueStart < utf8.count, utf8[valueStart] == 0x20 || utf8[valueStart] == 0x09 { valueStart += 1 }
            let nameAt = bytes.count
            bytes += name
            let valueAt = bytes.count
            bytes += utf8[valueStart...]
            spans.append((nameAt, name.count, valueAt, utf8.count - valueStart))
        }
        storage = .allocate(capacity: Swift.max(bytes.count, 1))
        storage.initialize(from: bytes, count: bytes.count)
        self.spans = spans
    }

    deinit { storage.deallocate() }

    /// Appends this block's fields at `fields[count...]`; returns the new count.
    func append(to fields: UnsafeMutablePointer<nghttp2_nv>, at count: Int) -> Int {
        var index = count
        for span in spans {
            fields[index] = nghttp2_nv(
                name: storage + span.name, value: storage + span.value, namelen: span.nameLength, valuelen: span.valueLength,
                flags: UInt8(NGHTTP2_NV_FLAG_NONE.rawValue)
            )
            index &+= 1
        }
        return index
    }
}

/// The per-request part of a request's fields (pseudo-headers, path, per-request items,
/// `content-length`), written into storage the engine owns and reuses: no allocation per
/// request. Sized for the largest request `HTTP2Transport.check` lets through.
struct HTTP2FieldScratch {
    static let byteCapacity = 32 << 10
    static let fieldCapacity = 160
    let bytes: UnsafeMutablePointer<UInt8>
    let fields: UnsafeMutablePointer<nghttp2_nv>
    private(set) var used = 0
    private(set) var count = 0
    /// Constant names and values the pseudo-headers point at.
    private let constants: UnsafeMutablePointer<UInt8>

    private static let constantText = ":method:scheme:authority:pathhttpscontent-length"

    init() {
        bytes = .allocate(capacity: Self.byteCapacity)
        fields = .allocate(capacity: Self.fieldCapacity)
        let text = Array(Self.constantText.utf8)
        constants = .allocate(capacity: text.count)
        constants.initialize(from: text, count: text.count)
    }

    func deallocate() {
        bytes.deallocate()
        fields.deallocate()
        constants.deallocate()
    }

    mutating func reset() {
        used = 0
        count = 0
    }

    /// Room for `bytes` more bytes and one more field (the checks bound every request well
    /// below; a request past them is refused rather than overrunning).
    func fits(bytes extra: Int, fields more: Int = 1) -> Bool {
        used &+ extra <= Self.byteCapacity && count &+ more <= Self.fieldCapacity
    }

    mutating func setCount(_ count: Int) { self.count = count }

    private mutating func field(name: UnsafeMutablePointer<UInt8>, _ nameLength: Int, value: UnsafeMutablePointer<UInt8>, _ valueLength: Int) {
        fields[count] = nghttp2_nv(name: name, value: value, namelen: nameLength, valuelen: valueLength, flags: UInt8(NGHTTP2_NV_FLAG_NONE.rawValue))
        count &+= 1
    }

    /// `:method`, `:scheme: https`, `:authority`; the path is written next with `beginValue` /
    /// `write` / `endPath`.
    mutating func pseudoHeaders(method: String, authority: UnsafeMutablePointer<UInt8>, authorityLength: Int) {
        let start = used
        var method = method
        method.withUTF8 { write($0) }
        field(name: constants, 7, value: bytes + start, used - start)
        field(name: constants + 7, 7, value: constants + 29, 5)
        field(name: constants + 14, 10, value: authority, authorityLength)
    }

    /// Starts a value: what `write` appends until `end…` belongs to it.
    func beginValue() -> Int { used }

    mutating func write(_ source: UnsafeBufferPointer<UInt8>) {
        guard let base = source.baseAddress, source.count > 0 else { return }
        (bytes + used).update(from: base, count: source.count)
        used &+= source.count
    }

    mutating func write(_ source: UnsafeRawBufferPointer) {
        write(source.bindMemory(to: UInt8.self))
    }

    mutating func endPath(from start: Int) {
        if used == start {
            bytes[used] = UInt8(ascii: "/")
            used &+= 1
        }
        field(name: constants + 24, 5, value: bytes + start, used - start)
    }

    /// A field whose name is written lower-cased.
    mutating func field(name: String, value: UnsafeRawBufferPointer) {
        let nameStart = used
        for byte in name.utf8 {
            bytes[used] = (0x41...0x5A).contains(byte) ? byte | 0x20 : byte
            used &+= 1
        }
        let nameLength = used - nameStart
        let valueStart = used
        write(value)
        field(name: bytes + nameStart, nameLength, value: bytes + valueStart, used - valueStart)
    }

    mutating func contentLength(_ length: Int) {
        var digits = 0
        var rest = Swift.max(0, length)
        repeat {
            digits &+= 1
            rest /= 10
        } while rest > 0
        rest = Swift.max(0, length)
        for index in stride(from: digits - 1, through: 0, by: -1) {
            bytes[used &+ index] = UInt8(ascii: "0") &+ UInt8(rest % 10)
            rest /= 10
        }
        field(name: constants + 34, 14, value: bytes + used, digits)
        used &+= digits
    }
}
