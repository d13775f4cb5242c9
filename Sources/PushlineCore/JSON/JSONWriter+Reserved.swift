extension JSONWriter {
    /// Reserve-then-write: makes room for `maximum` more bytes once, then `body` appends raw
    /// pieces through a cursor that checks only its own bound. Each `appendRaw` pays the
    /// array's uniqueness check and growth test, which for a dry-run line's dozen short framing
    /// pieces cost about as much as copying them (docs/benchmarks.md, "Reserve, then write").
    ///
    /// What `body` appends is taken as raw bytes, as `appendRaw` takes them: the separator state
    /// is not touched. A cursor asked to go past `maximum` traps rather than write out of bounds:
    /// a wrong bound is a bug in the caller, never a matter of input.
    public mutating func appendReserved(atMost maximum: Int, _ body: (inout ReservedBytes) -> Void) {
        precondition(maximum >= 0, "a reservation is never negative")
        bytes.append(addingCapacity: maximum) { span in
            span.withUnsafeMutableBufferPointer { buffer, initialized in
                var cursor = ReservedBytes(start: buffer.baseAddress.map { $0 + initialized }, capacity: buffer.count - initialized)
                body(&cursor)
                initialized += cursor.count
            }
        }
    }

    /// The write side of `appendReserved`: a pointer, a count and the end it must not pass.
    /// Not copyable: a copy would let two counts advance over one reservation.
    public struct ReservedBytes: ~Copyable {
        private let start: UnsafeMutablePointer<UInt8>?
        private let capacity: Int
        public private(set) var count = 0

        fileprivate init(start: UnsafeMutablePointer<UInt8>?, capacity: Int) {
            self.start = start
            self.capacity = capacity
        }

        @inline(__always)
        public mutating func append(_ raw: UnsafeRawBufferPointer) {
            guard let source = raw.baseAddress else { return }
            let n = raw.count
            precondition(n <= capacity &- count, "wrote past the reservation")
            UnsafeMutableRawPointer(start.unsafelyUnwrapped + count).copyMemory(from: source, byteCount: n)
            count &+= n
        }

        @inline(__always)
        public mutating func append(_ raw: StaticString) {
            append(UnsafeRawBufferPointer(start: raw.utf8Start, count: raw.utf8CodeUnitCount))
        }

        @inline(__always)
        public mutating func append(byte: UInt8) {
            precondition(count < capacity, "wrote past the reservation")
            start.unsafelyUnwrapped[count] = byte
            count &+= 1
        }

        /// At most this many bytes: `Int.min` in decimal.
        public static let maximumDecimalLength = 20

        /// `value` in decimal, at most `maximumDecimalLength` bytes.
        public mutating func appendDecimal(_ value: Int) {
            JSONWriter.withDecimalText(value) { append($0) }
        }
    }
}
