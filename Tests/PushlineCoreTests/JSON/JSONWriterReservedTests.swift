import PushlineCore
import Testing

/// `JSONWriter.appendReserved`: reserve once, then write pieces through a cursor.
@Suite("JSON writer: reserve, then write")
struct JSONWriterReservedTests {
    @Test func piecesLandInOrderAfterWhatWasWrittenAndCountOnlyWhatWasWritten() {
        var writer = JSONWriter(reservingCapacity: 0)
        writer.beginArray()
        writer.writeInt(1)
        let before = writer.count
        writer.appendReserved(atMost: 100) { out in
            out.append(",")
            out.append(byte: UInt8(ascii: "2"))
            [UInt8](",3".utf8).withUnsafeBytes { out.append($0) }
            out.append(UnsafeRawBufferPointer(start: nil, count: 0))
        }
        // Only the four bytes written count, not the hundred reserved.
        #expect(writer.count == before + 4)
        // Raw bytes leave the separator as it was: a value just ended, so the next takes a comma.
        writer.writeInt(4)
        writer.endArray()
        #expect(String(decoding: writer.bytes, as: UTF8.self) == "[1,2,3,4]")
    }

    /// `appendRawRun` writes what the separator, the raw bytes and the separator state it
    /// replaces wrote, in every combination: first in a container and after a value, as a
    /// separated or an unseparated run, ending a value or (a key) not.
    @Test func aRawRunWritesWhatItsThreeStepsWrote() {
        let runs: [(raw: String, separated: Bool, endsValue: Bool)] = [
            (#""a":1"#, true, true), (#""k":"#, true, false), ("2", false, true),
            (#""b":{},"c":[]"#, true, true), ("", true, true), (#""d":"#, true, false), ("null", false, true),
        ]
        for start in 0..<runs.count {
            var stepwise = JSONWriter(reservingCapacity: 0)
            var single = JSONWriter(reservingCapacity: 0)
            stepwise.beginObject()
            single.beginObject()
            for run in runs[start...] + runs[..<start] {
                let bytes = Array(run.raw.utf8)
                bytes.withUnsafeBytes { raw in
                    if run.separated { stepwise.beginRawValue() }
                    stepwise.appendRaw(raw)
                    if run.endsValue { stepwise.endRawValue() } else { stepwise.resetSeparator() }
                    single.appendRawRun(raw, separated: run.separated, endsValue: run.endsValue)
                }
                #expect(single.bytes == stepwise.bytes && single.separatorPending == stepwise.separatorPending, "from run \(start)")
            }
        }
        // Spelled out once: a member run after a member takes a comma, a key's value none.
        var writer = JSONWriter(reservingCapacity: 0)
        writer.beginObject()
        for run in runs.prefix(3) { Array(run.raw.utf8).withUnsafeBytes { writer.appendRawRun($0, separated: run.separated, endsValue: run.endsValue) } }
        writer.endObject()
        #expect(String(decoding: writer.bytes, as: UTF8.self) == #"{"a":1,"k":2}"#)
    }

    @Test func decimalsMatchTheStandardLibrarysAtTheEndsOfTheRange() {
        let values = [0, 7, -1, 10, 99, 100, -100, 1_800_000_000, Int.max, Int.min, Int.min + 1]
        var writer = JSONWriter(reservingCapacity: 0)
        for value in values {
            writer.appendReserved(atMost: JSONWriter.ReservedBytes.maximumDecimalLength + 1) { out in
                out.appendDecimal(value)
                out.append(byte: 0x0A)
            }
        }
        let expected = values.map { "\($0)\n" }.joined()
        #expect(String(decoding: writer.bytes, as: UTF8.self) == expected)
        #expect(String(Int.min).utf8.count == JSONWriter.ReservedBytes.maximumDecimalLength)
    }

    @Test func anEmptyReservationOnAnEmptyWriterWritesNothing() {
        var writer = JSONWriter(reservingCapacity: 0)
        var called = false
        writer.appendReserved(atMost: 0) { out in
            out.append(UnsafeRawBufferPointer(start: nil, count: 0))
            called = true
        }
        #expect(called && writer.count == 0)
    }

    /// Many reservations, each filled only in part, past many growths of the storage: every
    /// byte is where it belongs (a growth copies what was written, not what was reserved).
    @Test func reservationsAcrossGrowthKeepEveryByte() {
        var writer = JSONWriter(reservingCapacity: 1)
        var expected: [UInt8] = []
        for i in 0..<20_000 {
            let piece = [UInt8](repeating: UInt8(truncatingIfNeeded: i % 251), count: i % 37)
            writer.appendReserved(atMost: piece.count + i % 13) { out in
                piece.withUnsafeBytes { out.append($0) }
            }
            expected += piece
        }
        #expect(writer.bytes == expected)
    }

    /// A cached render is copied back as a string: separator, quotes and content in one reservation.
    @Test func escapedContentIsWrittenAsAStringValueWithItsSeparator() {
        var writer = JSONWriter(reservingCapacity: 0)
        writer.beginArray()
        [UInt8](#"Hi \"there\""#.utf8).withUnsafeBytes { writer.writeString(escapedContent: $0) }
        writer.writeString(escapedContent: UnsafeRawBufferPointer(start: nil, count: 0))
        writer.writeInt(3)
        writer.endArray()
        #expect(String(decoding: writer.bytes, as: UTF8.self) == #"["Hi \"there\"","",3]"#)
    }

    /// A bound too small is the caller's bug: the cursor stops the process rather than write
    /// past the reservation into memory it does not own.
    @Test func writingPastTheReservationTrapsInsteadOfOverrunning() async {
        await #expect(processExitsWith: .failure) {
            var writer = JSONWriter(reservingCapacity: 0)
            writer.appendReserved(atMost: 2) { out in out.append("abc") }
        }
        await #expect(processExitsWith: .failure) {
            var writer = JSONWriter(reservingCapacity: 0)
            writer.appendReserved(atMost: 1) { out in
                out.append(byte: 0x61)
                out.append(byte: 0x62)
            }
        }
    }
}
