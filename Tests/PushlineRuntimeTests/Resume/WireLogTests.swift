import Foundation
import PushlineCore
import PushlineDelivery
@testable import PushlineRuntime
import Testing

@Suite("Wire logs: which devices may have been on the wire")
struct WireLogTests {
    @Test func aRecordPacksIntoEightBytesAndBack() {
        for record in [
            WireRecord(line: 1, device: 0, kind: .started), WireRecord(line: WireRecord.lineLimit, device: 65_534, kind: .notDelivered),
            WireRecord(line: 123_456_789, device: 3, kind: .started),
        ] {
            #expect(WireRecord(packed: record.packed) == record)
        }
        // Devices past the cap share it; lines past the limit are clamped, never wrapped.
        #expect(WireRecord(packed: WireRecord(line: 7, device: 1 << 20, kind: .started).packed).device == WireRecord.deviceLimit)
        #expect(WireRecord(packed: WireRecord(line: Int.max, device: 0, kind: .started).packed).line == WireRecord.lineLimit)
    }

    @Test func theLastRecordOfADeviceDecidesAndATornRecordIsIgnored() throws {
        let scratch = try Scratch()
        let folder = scratch.file("out")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let log = try #require(WireLogFile(folder: folder, provider: .apns))
        let records: [WireRecord] = [
            .init(line: 5, device: 0, kind: .started), .init(line: 5, device: 0, kind: .notDelivered),  // answered 503: not on the wire
            .init(line: 6, device: 0, kind: .started), .init(line: 6, device: 0, kind: .notDelivered),
            .init(line: 6, device: 0, kind: .started),  // retried: on the wire again
            .init(line: 7, device: 1, kind: .started),
            .init(line: 9, device: 70_000, kind: .started),  // capped: covers every device from 65535 on
            .init(line: 40, device: 0, kind: .started),  // outside the lines asked about
        ]
        records.withUnsafeBufferPointer { log.record($0) }
        // A kill in the middle of a write: half a record at the end.
        let handle = try #require(FileHandle(forWritingAtPath: folder + "/" + WireLogFile.name(.apns)))
        try handle.seekToEnd()
        try handle.write(contentsOf: [1, 2, 3])
        try handle.close()

        let starts = try #require(WireLogFile.possiblyOnTheWire(folder: folder, provider: .apns, lines: 1...20))
        #expect(!starts.mayHaveBeenSent(DeviceKey(line: 5, device: 0)))
        #expect(starts.mayHaveBeenSent(DeviceKey(line: 6, device: 0)))
        #expect(starts.mayHaveBeenSent(DeviceKey(line: 7, device: 1)))
        #expect(!starts.mayHaveBeenSent(DeviceKey(line: 7, device: 0)))
        #expect(starts.mayHaveBeenSent(DeviceKey(line: 9, device: 65_535)) && starts.mayHaveBeenSent(DeviceKey(line: 9, device: 80_000)))
        #expect(!starts.mayHaveBeenSent(DeviceKey(line: 40, device: 0)))
        // No log: nothing is known (the caller marks by the horizon).
        #expect(WireLogFile.possiblyOnTheWire(folder: folder, provider: .fcm, lines: 1...20) == nil)
    }
}
