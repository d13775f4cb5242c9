import PushlineCore
import Testing

@Suite("Delivery outcomes and their counts")
struct DeliveryOutcomeTests {
    static let webNotTargeted = SkipReason(SkipReason.notTargetedCode, "device type 'web' is not in device_types")

    @Test func eachOutcomeKeepsItsDetails() {
        let sent = DeliveryOutcome.sent(providerID: "8E2E6C4A-0000-4000-8000-000000000001", attempts: 2, possibleDuplicate: true)
        #expect(sent.kind == .sent && sent.providerID == "8E2E6C4A-0000-4000-8000-000000000001" && sent.attempts == 2 && sent.possibleDuplicate)
        #expect(sent.reasonCode == nil)
        let invalid = DeliveryOutcome.invalidToken(reason: "Unregistered", timestamp: 1_800_000_000_123)
        #expect(invalid.kind == .invalidToken && invalid.reasonCode == "Unregistered" && invalid.invalidTokenTimestamp == 1_800_000_000_123)
        let failed = DeliveryOutcome.failed(reason: "InternalServerError", httpStatus: 500, attempts: 5)
        #expect(failed.kind == .failed && failed.httpStatus == 500 && failed.attempts == 5 && failed.reasonCode == "InternalServerError")
        let rejected = DeliveryOutcome.rejected(RejectReason("payload_too_large", "too big"))
        #expect(rejected.kind == .rejected && rejected.rejectReason?.code == "payload_too_large" && rejected.reasonCode == "payload_too_large")
        let skipped = DeliveryOutcome.skipped(Self.webNotTargeted)
        #expect(skipped.kind == .skipped && skipped.skipReason?.code == "device_type_not_targeted")
        #expect(DeliveryOutcome.written.kind == .written && DeliveryOutcome.written.attempts == 0)
        // An attempt count below one is never reported.
        #expect(DeliveryOutcome.sent(providerID: nil, attempts: 0).attempts == 1)
        #expect(failed.description == "failed (InternalServerError, status 500, 5 attempts)")
    }

    @Test func everyOutcomeReconcilesPerProvider() {
        var counts = RunCounts()
        let outcomes: [(DeliveryOutcome, Provider?)] = [
            (.written, .apns),
            (.sent(providerID: "a", attempts: 1), .apns),
            (.sent(providerID: "projects/p/messages/1", attempts: 3, possibleDuplicate: true), .fcm),
            (.invalidToken(reason: "UNREGISTERED"), .fcm),
            (.rejected(RejectReason("payload_too_large", "x")), .apns),
            (.rejected(RejectReason("unknown_platform", "x")), nil),
            (.failed(reason: "timeout", httpStatus: 0, attempts: 4), .fcm),
            (.skipped(Self.webNotTargeted), .webpush),
        ]
        for (outcome, provider) in outcomes {
            counts.countDevice(provider: provider)
            counts.record(outcome, provider: provider)
        }
        #expect(counts.devices == 8 && counts.settledTotal == 8)
        #expect(counts.reconciles && counts.reconcilesByProvider)
        #expect(counts.byProvider[.apns] == { var c = OutcomeCounts(); c.devices = 3; c.written = 1; c.sent = 1; c.rejected = 1; return c }())
        #expect(counts.byProvider[.fcm]?.devices == 3 && counts.byProvider[.fcm]?.invalidToken == 1 && counts.byProvider[.fcm]?.failed == 1)
        #expect(counts.unrouted.devices == 1 && counts.unrouted.rejected == 1)
        #expect(counts.invalidTokens == ["UNREGISTERED": 1] && counts.failed == ["timeout": 1] && counts.possibleDuplicates == 1)
        #expect(counts.sent == [.apns: 1, .fcm: 1] && counts.written == [.apns: 1])

        // A device with no outcome breaks both equations; one recorded under the wrong
        // provider breaks only the per-provider one.
        var missing = counts
        missing.countDevice(provider: .adm)
        #expect(!missing.reconciles && !missing.reconcilesByProvider)
        var misfiled = counts
        misfiled.countDevice(provider: .adm)
        misfiled.record(.sent(providerID: nil, attempts: 1), provider: .apns)
        #expect(misfiled.reconciles && !misfiled.reconcilesByProvider)

        var total = RunCounts()
        total.add(counts)
        total.add(counts)
        #expect(total.devices == 16 && total.reconciles && total.reconcilesByProvider && total.byProvider[.fcm]?.devices == 6)
    }

    /// A stopped run's devices: `unsent`, with the attempts made and whether one may have reached
    /// the provider; counted by reason and per provider, and part of both reconciliations.
    @Test func unsentDevicesAreCountedAndReconcile() {
        let never = DeliveryOutcome.unsent(attempts: 0, possibleDuplicate: false)
        #expect(never.kind == .unsent && never.kind.rawValue == "unsent")
        #expect(never.reasonCode == "run_stopped" && never.attempts == 0 && !never.possibleDuplicate)
        let cancelledInFlight = DeliveryOutcome.unsent(attempts: 2, possibleDuplicate: true)
        #expect(cancelledInFlight.attempts == 2 && cancelledInFlight.possibleDuplicate)
        #expect(cancelledInFlight.description == "unsent (run_stopped, 2 attempts, possible duplicate)")
        #expect(DeliveryOutcome.unsent(attempts: -3, possibleDuplicate: false).attempts == 0)
        let failedInFlight = DeliveryOutcome.failed(reason: "cancelled", httpStatus: 0, attempts: 1, possibleDuplicate: true)
        #expect(failedInFlight.kind == .failed && failedInFlight.possibleDuplicate)
        #expect(!DeliveryOutcome.failed(reason: "cancelled", httpStatus: 0, attempts: 1).possibleDuplicate)

        var counts = RunCounts()
        let outcomes: [(DeliveryOutcome, Provider)] = [
            (.sent(providerID: "a", attempts: 1), .apns),
            (never, .apns),
            (cancelledInFlight, .apns),
            (never, .fcm),
            (failedInFlight, .fcm),
            (.sent(providerID: "m", attempts: 2, possibleDuplicate: true), .fcm),
        ]
        for (outcome, provider) in outcomes {
            counts.countDevice(provider: provider)
            counts.record(outcome, provider: provider)
        }
        #expect(counts.devices == 6 && counts.settledTotal == 6)
        #expect(counts.reconciles && counts.reconcilesByProvider)
        #expect(counts.unsent == ["run_stopped": 3] && counts.unsentTotal == 3)
        #expect(counts.byProvider[.apns]?.unsent == 2 && counts.byProvider[.fcm]?.unsent == 1)
        #expect(counts.byProvider[.apns]?.settled == 3 && counts.byProvider[.fcm]?.settled == 3)
        // A resent-and-sent device is a possible duplicate; an unsent or failed one that may have
        // been delivered is counted apart (sending it again may notify it twice).
        #expect(counts.possibleDuplicates == 1 && counts.possiblyDelivered == 2)

        // An unsent device under another provider's count breaks only the per-provider sum; a
        // device without one breaks both.
        var misfiled = counts
        misfiled.countDevice(provider: .fcm)
        misfiled.record(never, provider: .apns)
        #expect(misfiled.reconciles && !misfiled.reconcilesByProvider)
        var missing = counts
        missing.countDevice(provider: .apns)
        #expect(!missing.reconciles && !missing.reconcilesByProvider)

        var total = RunCounts()
        total.add(counts)
        total.add(counts)
        #expect(total.unsent == ["run_stopped": 6] && total.possiblyDelivered == 4 && total.reconciles && total.reconcilesByProvider)
    }
}
