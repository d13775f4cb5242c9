import Foundation
import Testing

/// `pushline-emulator --print-config`, `validate` and `run` with the providers' credentials, through
/// the real binaries.
@Suite("Command line: credentials, run modes, print-config", .enabled(if: PushlineBinary.exists, "needs .build/debug/pushline (swift build --build-tests)"))
struct ConfigurationCommandLineTests {
    /// The notification part of a pipeline; a `providers:` block is appended.
    static let campaign = """
    name: staged
    device_types: [ios, android]
    notification:
      alert: "Hi {{ id }}"

    """

    @Test(.enabled(if: PushlineBinary.emulatorExists, "needs .build/debug/pushline-emulator (swift build --build-tests)"))
    func thePrintedProvidersBlockIsAcceptedByValidateAsPrinted() async throws {
        let scratch = try Scratch()
        let printed = try await PushlineBinary.run(["--print-config", "--port", "18452", "--state-dir", scratch.file("emu")], executable: PushlineBinary.emulatorPath)
        #expect(printed.status == 0, "\(printed.stderr)")
        #expect(printed.stdout.hasPrefix("providers:\n"))
        let pipeline = scratch.file("staged.yaml")
        try (Self.campaign + printed.stdout).write(toFile: pipeline, atomically: true, encoding: .utf8)
        let validated = try await PushlineBinary.run(["validate", pipeline])
        #expect(validated.status == 0, "\(validated.stderr)")
        #expect(validated.stdout == "\(pipeline): valid (campaign 'staged', liquid, device types android, ios, sends to apns with nghttp2, fcm with nghttp2)\n")
        #expect(validated.stderr.isEmpty)
    }

    @Test func runWithoutCredentialsIsADryRunAndSaysSoInOneLine() async throws {
        let scratch = try Scratch()
        let outcome = try await PushlineBinary.run(["run", CommandLineTests.demo, "--output", scratch.file("out"), "--log-level", "notice"])
        #expect(outcome.status == 0, "\(outcome.stderr)")
        let notices = outcome.stderrLines.filter { $0.contains("no provider credentials configured") }
        #expect(notices.count == 1)
        #expect(notices.first?.hasSuffix("no provider credentials configured (providers.apns.key_file, providers.fcm.service_account, providers.webpush.vapid_private_key): this run is a dry run, nothing is sent") == true)
        #expect(FileManager.default.fileExists(atPath: scratch.file("out/requests-apns.ndjson")))
    }

    @Test func validateOnlyIsAUsageErrorUnlessSending() async throws {
        let scratch = try Scratch()
        let combined = try await PushlineBinary.run(["run", CommandLineTests.demo, "--dry-run", "--validate-only", "--output", scratch.file("out")])
        #expect(combined.status == 64)
        #expect(combined.stderrLines == ["pushline: error: --validate-only asks FCM to check the requests while sending; it cannot be combined with --dry-run (see --help)"])
        let uncredentialed = try await PushlineBinary.run(["run", CommandLineTests.demo, "--validate-only", "--output", scratch.file("out")])
        #expect(uncredentialed.status == 64)
        #expect(uncredentialed.stderrLines == ["pushline: error: --validate-only needs provider credentials (it sends to FCM with validate_only); \(CommandLineTests.demo) configures none"])
        #expect(!FileManager.default.fileExists(atPath: scratch.file("out")), "nothing was read or written")
    }

    @Test func aMissingVariableStopsRunBeforeAnythingIsRead() async throws {
        let scratch = try Scratch()
        let pipeline = scratch.file("p.yaml")
        let yaml = Self.campaign + """
        audience: missing-audience.ndjson
        providers:
          apns: { team_id: T1, key_id: K1, key_file: "${PUSHLINE_TEST_NEVER_SET_KEY_FILE}", topic: t }
          fcm: { project_id: p1 }

        """
        try yaml.write(toFile: pipeline, atomically: true, encoding: .utf8)
        for command in [["run", pipeline, "--output", scratch.file("out")], ["validate", pipeline]] {
            let outcome = try await PushlineBinary.run(command)
            #expect(outcome.status == 2, "\(command)")
            // Line 7 (four campaign lines, audience, providers); `  apns: { team_id: T1, key_id: K1,
            // key_file: ` puts the value's quote at column 46.
            #expect(outcome.stderrLines == [
                "\(pipeline):7:46: error: providers.apns.key_file: environment variable PUSHLINE_TEST_NEVER_SET_KEY_FILE is not set",
                "pushline: error: \(pipeline): invalid pipeline (1 error); nothing was read",
            ], "\(command)")
        }
        #expect(!FileManager.default.fileExists(atPath: scratch.file("out")))
    }

    @Test func anUnquotedVariableInBracesGetsAHint() async throws {
        let scratch = try Scratch()
        let pipeline = scratch.file("p.yaml")
        try (Self.campaign + "providers:\n  apns: { key_file: ${APNS_KEY_FILE}, topic: t }\n").write(toFile: pipeline, atomically: true, encoding: .utf8)
        let outcome = try await PushlineBinary.run(["validate", pipeline])
        #expect(outcome.status == 2)
        #expect(outcome.stderrLines.first?.hasSuffix("(a ${VAR} inside { } or [ ] must be quoted, as { } are YAML's: key_file: \"${APNS_KEY_FILE}\")") == true, "\(outcome.stderr)")
    }

    @Test func validateRefusesAPipelineThatCannotSendWhatItTargets() async throws {
        let f = try CredentialFixture.files()
        let scratch = try Scratch()
        let pipeline = scratch.file("p.yaml")
        let yaml = DeliveryConfigurationTests.pipeline(DeliveryConfigurationTests.apns(f) + DeliveryConfigurationTests.fcm(f), deviceTypes: "[ios, amazon]")
        try yaml.write(toFile: pipeline, atomically: true, encoding: .utf8)
        let outcome = try await PushlineBinary.run(["validate", pipeline])
        #expect(outcome.status == 2)
        #expect(outcome.stderrLines == [
            "\(pipeline):6:3: error: providers.adm.client_id: is required to send: amazon devices go to ADM; add client_id and client_secret_file (the app's security profile) to providers.adm (or run with --dry-run)",
            "pushline: error: \(pipeline): invalid pipeline to send (1 error); nothing was read",
        ])
        // The same pipeline dry-runs.
        let audience = scratch.file("a.ndjson")
        try #"{"id":"c1","devices":[{"platform":"amazon","token":"amzn1.adm-registration.v3.abc"}]}"#.write(toFile: audience, atomically: true, encoding: .utf8)
        let dry = try await PushlineBinary.run(["run", pipeline, "--dry-run", "--audience", audience, "--output", scratch.file("out"), "--log-level", "critical"])
        #expect(dry.status == 0 || dry.status == 3, "\(dry.stderr)")
    }

    @Test func validateAsksForTheVAPIDKeyWhenWebDevicesGoToWebPush() async throws {
        let f = try CredentialFixture.files()
        let scratch = try Scratch()
        let pipeline = scratch.file("p.yaml")
        let yaml = DeliveryConfigurationTests.pipeline(DeliveryConfigurationTests.apns(f) + DeliveryConfigurationTests.fcm(f), deviceTypes: "[ios, web]")
        try yaml.write(toFile: pipeline, atomically: true, encoding: .utf8)
        let outcome = try await PushlineBinary.run(["validate", pipeline])
        #expect(outcome.status == 2)
        #expect(outcome.stderrLines.count == 2)
        #expect(outcome.stderrLines.first?.contains("error: providers.webpush.vapid_private_key: is required to send: web devices go to Web Push") == true, "\(outcome.stderr)")
    }
}
