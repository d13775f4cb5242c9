import Foundation
import Testing

/// The `pushline` binary links only what sending needs: the emulator is an executable of its
/// own, so building `pushline` compiles no SwiftNIO, nio-ssl (a second BoringSSL), nio-http2 or
/// swift-certificates (a fresh clone's first `scripts/demo` took 801 s with them).
@Suite("pushline links no emulator", .enabled(if: PushlineBinary.exists, "needs .build/debug/pushline (swift build --build-tests)"))
struct PushlineLinkageTests {
    /// The start of a Swift symbol defined in each module (`$s<length><module>`), and nio-ssl's
    /// BoringSSL symbol prefix (swift-crypto's, which sending uses, is `CCryptoBoringSSL_`).
    static let emulatorOnly = ["$s16PushlineEmulator", "$s7NIOCore", "$s8NIOPosix", "$s8NIOHTTP2", "$s6NIOSSL", "$s4X509", "CNIOBoringSSL_"]

    @Test func theBinaryHoldsNoSymbolOfTheEmulatorOrSwiftNIO() throws {
        let binary = try Data(contentsOf: URL(fileURLWithPath: PushlineBinary.path), options: .alwaysMapped)
        // The search works: modules `pushline` does link are found by the same kind of name.
        for linked in ["$s16PushlineDelivery", "$s15PushlineRuntime"] {
            #expect(binary.range(of: Data(linked.utf8)) != nil, "\(linked) should be in the binary")
        }
        for name in Self.emulatorOnly {
            #expect(binary.range(of: Data(name.utf8)) == nil, "\(name) is linked into pushline")
        }
    }

    /// The names searched for are the ones those modules' symbols really have: the emulator's
    /// binary holds every one.
    @Test(.enabled(if: PushlineBinary.emulatorExists, "needs .build/debug/pushline-emulator"))
    func theEmulatorBinaryHoldsThem() throws {
        let binary = try Data(contentsOf: URL(fileURLWithPath: PushlineBinary.emulatorPath), options: .alwaysMapped)
        for name in Self.emulatorOnly {
            #expect(binary.range(of: Data(name.utf8)) != nil, "\(name) not found in pushline-emulator")
        }
    }

    @Test func emulateIsNoLongerACommandOfPushline() async throws {
        let outcome = try await PushlineBinary.run(["emulate"])
        #expect(outcome.status == 64)
        #expect(outcome.stderr == "pushline: error: Unexpected argument 'emulate' (see --help)\n")
    }
}
