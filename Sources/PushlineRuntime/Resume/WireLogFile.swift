import PushlineCore
import PushlineDelivery
import PushlineIO
import Foundation

/// A provider's `WireLog` in the run's folder, `wire-<provider>.log`: 8-byte records
/// (`WireRecord.packed`, little endian) appended straight to the kernel, one write per transfer
/// loop turn. Removed once the run finishes; a killed, stopped or failed run leaves it for the
/// resume, which reads it to mark only what may really have been delivered twice.
final class WireLogFile: WireLog {
    static let prefix = "wire-"
    static let suffix = ".log"

    static func name(_ provider: Provider) -> String { prefix + provider.rawValue + suffix }

    private let file: AppendOnlyFile

    /// Removes the log (its lane does not record): a resume then knows nothing and marks by the
    /// horizon, instead of reading an empty log as "nothing was on the wire".
    func remove() { file.remove() }

    /// Opens (or continues) `provider`'s log in `folder`; nil when it cannot be opened (the run
    /// goes on, and a resume falls back to the journal's horizon for that provider).
    init?(folder: String, provider: Provider) {
        guard case .success(let file) = AppendOnlyFile.open(folder + "/" + Self.name(provider)) else { return nil }
        self.file = file
    }

    func record(_ records: UnsafeBufferPointer<WireRecord>) {
        guard !records.isEmpty else { return }
        withUnsafeTemporaryAllocation(of: UInt64.self, capacity: records.count) { words in
            for (i, record) in records.enumerated() { words[i] = record.packed.littleEndian }
            file.append(UnsafeRawBufferPointer(words))
        }
    }

    /// The devices of lines in `lines` whose last record in `folder`'s log of `provider` is a
    /// start: they may have been on the wire when the run ended. Nil when there is no log (never
    /// opened, or removed after a failed write): then nothing is known, and every device of those
    /// lines without a result line may have been.
    static func possiblyOnTheWire(folder: String, provider: Provider, lines: ClosedRange<Int>) -> WireStarts? {
        let path = folder + "/" + name(provider)
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        var last: [DeviceKey: Bool] = [:]
        var carry: [UInt8] = []
        while true {
            let read: Data?
            do { read = try handle.read(upToCount: 1 << 20) } catch { return nil }
            // Nil (or empty) at the end of the file.
            guard let chunk = read, !chunk.isEmpty else { break }
            carry.append(contentsOf: chunk)
            let whole = carry.count / 8 * 8
            carry.withUnsafeBytes { bytes in
                for offset in stride(from: 0, to: whole, by: 8) {
                    let record = WireRecord(packed: UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self)))
                    guard lines.contains(record.line) else { continue }
                    last[DeviceKey(line: record.line, device: Int(record.device))] = record.kind == .started
                }
            }
            // A torn last record (killed in the middle of a write) was never followed by its
            // transfer: the write returns before the transfer starts.
            carry.removeFirst(whole)
        }
        return WireStarts(devices: Set(last.compactMap { $0.value ? $0.key : nil }))
    }
}

/// Devices a killed run may have had on the wire, from its `WireLogFile`.
struct WireStarts: Sendable {
    var devices: Set<DeviceKey>

    func mayHaveBeenSent(_ key: DeviceKey) -> Bool {
        if key.device >= Int(WireRecord.deviceLimit) {
            return devices.contains(DeviceKey(line: key.line, device: Int(WireRecord.deviceLimit)))
        }
        return devices.contains(key)
    }
}
