extension JSONWriter {
    /// Writes a value of a validated document (a recipient id, an address, a record value).
    ///
    /// The value's text is copied as it stands, except strings (values or keys) holding a lone
    /// surrogate escape (`"\ud800"`): valid JSON, but strict parsers refuse it and it stands for
    /// no Unicode text, so those are decoded (the surrogate becomes U+FFFD, as invalid UTF-8 does)
    /// and escaped again. Documents without one (the parser records it) take the plain copy, so
    /// this costs one flag test on the hot path. Every raw copy of input text goes through here.
    public mutating func writeValue(_ value: JSONValue) {
        let document = value.document
        let range = value.byteRange
        separator()
        let lone = document.hasLoneSurrogates
        document.withTextAndTape { all, base, tape in
            guard lone else {
                bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: all[range]))
                return
            }
            // Tape entries of the value's subtree are in text order: copy the runs between the
            // flagged strings, re-encode those. A loop over the tape, no recursion.
            var copied = range.lowerBound
            let end = Int(tape[value.index].next)
            var k = value.index
            while k < end {
                let entry = tape[k]
                k &+= 1
                guard entry.aux & JSONTapeEntry.loneSurrogate != 0,
                      all[base &+ Int(entry.start)] == UInt8(ascii: "\"") else { continue }
                let start = base &+ Int(entry.start)
                let stop = base &+ Int(entry.end)
                bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: all[copied..<start]))
                let content = UnsafeRawBufferPointer(rebasing: all[(start &+ 1)..<(stop &- 1)])
                bytes.append(UInt8(ascii: "\""))
                withUnsafeTemporaryAllocation(byteCount: content.count, alignment: 1) { scratch in
                    let length = JSONStringDecoding.unescape(content, into: scratch)
                    JSONEscaper.appendEscaped(UnsafeRawBufferPointer(rebasing: scratch[..<length]), to: &bytes)
                }
                bytes.append(UInt8(ascii: "\""))
                copied = stop
            }
            bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: all[copied..<range.upperBound]))
        }
        needsComma = true
    }
}

extension JSONValue {
    /// The value's JSON text as it stands in the record, with lone surrogate escapes made U+FFFD
    /// as `JSONWriter.writeValue` does: what a template prints for a whole object, so printed
    /// JSON never carries a surrogate a strict parser of that text would refuse.
    public var jsonText: ArraySlice<UInt8> {
        guard document.hasLoneSurrogates else { return document.buffer[byteRange] }
        var writer = JSONWriter(reservingCapacity: byteRange.count &+ 16)
        writer.writeValue(self)
        return writer.bytes[...]
    }
}
