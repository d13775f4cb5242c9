import PushlineCore
import PushlineDelivery
@testable import PushlineIO
@testable import PushlineRuntime
import Testing

/// The run's verdict from its stages' reports (`RunReport.reconciling`), with plain values:
/// which status, which exit, which message, and when the counts reconcile.
@Suite("Run reconciliation: the verdict from the stages' reports")
struct RunReconciliationTests {
    /// Ten lines: eight recipients with one APNs device each, two blank. Outcomes as given.
    static func counts(sent: Int = 8, failed: Int = 0, rejected: Int = 0, unsent: Int = 0) -> RunCounts {
        var counts = RunCounts()
        counts.lines = 8
        counts.blankLines = 2
        counts.countDevices(8, provider: .apns)
        counts.record(.sent, reason: nil, provider: .apns, count: sent)
        counts.record(.failed, reason: "BadDeviceToken", provider: .apns, count: failed)
        counts.record(.rejected, reason: "payload_too_large", provider: .apns, count: rejected)
        counts.record(.unsent, reason: "run_stopped", provider: .apns, count: unsent)
        return counts
    }

    static func stages(
        _ counts: RunCounts? = counts(), sinkError: String? = nil, lines: Int = 10, sourceError: AudienceReadError? = nil,
        stop: StopReport? = nil, delivery: [ProviderDeliveryReport] = [], lost: Int = 0, endedEarly: [Provider] = [],
        checkpointed: Bool = true
    ) -> StageReports {
        var source = SourceReport(path: "audience.ndjson.gz")
        source.physicalLines = lines
        source.error = sourceError
        var sink = SinkReport()
        sink.counts = counts ?? RunCounts()
        sink.delivery = delivery
        sink.lostRequests = lost
        sink.lanesEndedEarly = endedEarly
        return StageReports(
            source: source, sink: sinkError.map { .failure(SinkError(message: $0)) } ?? .success(sink),
            settledThroughLine: lines, peakBatchesInFlight: 3, stop: stop, validateOnly: false, resumed: nil,
            checkpointed: checkpointed
        )
    }

    static func verdict(_ stages: StageReports) -> RunReport {
        RunReport.reconciling(stages, outputFolder: "out", seconds: 1)
    }

    @Test func everyDeviceSentIsCompletedAndReconciled() {
        let report = Self.verdict(Self.stages())
        #expect(report.status == .completed)
        #expect(report.exit == .ok)
        #expect(report.reconciled)
        #expect(report.failure == nil)
        #expect(report.mode == "send")
        #expect(report.settledThroughLine == 10)
    }

    @Test func failuresThenRejectsDecideACompletedRunsStatus() {
        #expect(Self.verdict(Self.stages(Self.counts(sent: 6, failed: 1, rejected: 1))).status == .completedWithFailures)
        #expect(Self.verdict(Self.stages(Self.counts(sent: 7, rejected: 1))).status == .completedWithRejects)
    }

    @Test func aStopComesBeforeTheOutcomesButAfterAFailure() {
        let stop = StopReport(cause: "SIGTERM", immediateCause: nil, inputReadToEnd: false, drainTimeoutSeconds: 30)
        let stopped = Self.verdict(Self.stages(Self.counts(sent: 5, failed: 1, unsent: 2), lines: 10, stop: stop))
        #expect(stopped.status == .stopped)
        #expect(stopped.exit == .stopped)
        #expect(stopped.reconciled)
        let brokenAndStopped = Self.verdict(Self.stages(Self.counts(sent: 7), stop: stop))
        #expect(brokenAndStopped.status == .failed, "a device without an outcome fails the run even when it was stopped")
    }

    @Test func aDeviceWithoutAnOutcomeFailsTheRunAsAnInternalError() {
        let report = Self.verdict(Self.stages(Self.counts(sent: 7)))
        #expect(report.status == .failed)
        #expect(report.exit == .internalError)
        #expect(!report.reconciled)
        #expect(report.failure == "counts do not reconcile: 8 devices read, 0 written + 7 sent + 0 rejected + 0 skipped")
    }

    @Test func aLineReadButNotProcessedFailsTheRun() {
        let report = Self.verdict(Self.stages(lines: 11))
        #expect(report.exit == .internalError)
        #expect(report.failure == "counts do not reconcile: 11 lines read, 8 processed + 2 blank")
    }

    @Test func anInputErrorIsTheStatusAndItsLinesAreNotCompared() {
        let error = AudienceReadError.truncatedGzip(path: "audience.ndjson.gz", offset: 400)
        let report = Self.verdict(Self.stages(lines: 11, sourceError: error))
        #expect(report.status == .inputError)
        #expect(report.reconciled)
    }

    @Test func aStoppedProviderFailsTheRunWithItsMessageAndTheCountsStillReconcile() {
        var apns = ProviderDeliveryReport(provider: .apns)
        var lane = LaneReport(provider: .apns)
        lane.stoppedBecause = "the key was refused (InvalidProviderToken)"
        apns.lane = lane
        let report = Self.verdict(Self.stages(Self.counts(sent: 0, failed: 8), delivery: [apns]))
        #expect(report.status == .failed)
        #expect(report.exit == .providerStopped)
        #expect(report.reconciled)
        #expect(report.failure == "the apns provider stopped: the key was refused (InvalidProviderToken)")
    }

    @Test func aLaneThatBrokeItsContractIsAnInternalError() {
        let report = Self.verdict(Self.stages(lost: 2, endedEarly: [.fcm]))
        #expect(report.exit == .internalError)
        #expect(report.failure == "a sending lane broke its contract: 2 requests never settled, 0 outcomes for unknown requests, events of fcm ended early")
    }

    @Test func resultsThatCouldNotBeWrittenAreAnOutputErrorAndNamedResumableOnlyWithACheckpoint() {
        let checkpointed = Self.verdict(Self.stages(sinkError: "sent.ndjson: No space left on device"))
        #expect(checkpointed.exit == .outputError)
        #expect(!checkpointed.reconciled)
        #expect(checkpointed.failure?.hasSuffix("continue with --resume") == true)
        let plain = Self.verdict(Self.stages(sinkError: "sent.ndjson: No space left on device", checkpointed: false))
        #expect(plain.failure == "writing results failed: sent.ndjson: No space left on device")
    }
}
