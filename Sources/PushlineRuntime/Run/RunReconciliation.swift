import PushlineCore

/// What the stages reported when they ended, and what the run knew beside them: the input of the
/// run's verdict (`RunReport.reconciling`).
struct StageReports: Sendable {
    var source: SourceReport
    var sink: Result<SinkReport, SinkError>
    /// The batch window's settled-line low-water mark, and the most batches it held at once.
    var settledThroughLine: Int
    var peakBatchesInFlight: Int
    /// Set when a stop came before the stages ended.
    var stop: StopReport?
    /// Sending runs: whether under `--validate-only`; nil for a dry run.
    var validateOnly: Bool?
    /// The checkpoint a resumed run continued (its runs, this one included; where it went on).
    var resumed: (runs: Int, afterLine: Int, horizonLine: Int)?
    /// The run keeps a checkpoint: a run whose results failed to write can be resumed.
    var checkpointed: Bool
}

extension RunReport {
    /// The run's report from its stages' reports: the counts must reconcile (every device one
    /// outcome, in total and per provider, and every line read processed), a lane that broke its
    /// contract or a sink that could not write fails the run, a stopped provider fails it with its
    /// message, and the status follows from the first that holds of: failed, stopped, input
    /// error, failures, rejects, completed. A pure function: no I/O, no clock.
    static func reconciling(_ stages: StageReports, outputFolder: String, seconds: Double) -> RunReport {
        var report = RunReport(status: .completed, counts: RunCounts(), source: stages.source, files: [], outputFolder: outputFolder, seconds: seconds)
        if let validateOnly = stages.validateOnly {
            report.mode = "send"
            report.validateOnly = validateOnly
        }
        var stoppedProviders: String?
        // Without the sink's counts there is nothing to reconcile.
        var sinkFailed = false
        switch stages.sink {
        case .success(let sinkReport):
            report.counts = sinkReport.counts
            if let resumed = stages.resumed {
                report.resume = ResumeReport(
                    runs: resumed.runs, afterLine: resumed.afterLine, horizonLine: resumed.horizonLine,
                    settledFromRecords: sinkReport.settledFromRecords
                )
            }
            report.files = sinkReport.files
            report.delivery = sinkReport.delivery
            let messages = sinkReport.delivery.compactMap { provider in
                provider.stoppedBecause.map { "the \(provider.provider.rawValue) provider stopped: \($0)" }
            }
            if !messages.isEmpty { stoppedProviders = messages.joined(separator: "; ") }
            if sinkReport.lostRequests > 0 || sinkReport.unknownTags > 0 || !sinkReport.lanesEndedEarly.isEmpty {
                var broken = "a sending lane broke its contract: \(sinkReport.lostRequests) requests never settled, \(sinkReport.unknownTags) outcomes for unknown requests"
                if !sinkReport.lanesEndedEarly.isEmpty {
                    broken += ", events of \(sinkReport.lanesEndedEarly.map(\.rawValue).joined(separator: ", ")) ended early"
                }
                report.failure = broken
                report.failureExit = .internalError
            }
        case .failure(let error):
            report.failure = "writing results failed: \(error.description)"
                + (stages.checkpointed ? "; the results written before it and the last checkpoint are kept: fix the cause (free space) and continue with --resume" : "")
            report.failureExit = .outputError
            sinkFailed = true
        }
        report.settledThroughLine = stages.settledThroughLine
        report.peakBatchesInFlight = stages.peakBatchesInFlight
        let reconcileFailure = Self.reconciliationProblem(report.counts, source: stages.source)
        report.reconciled = !sinkFailed && reconcileFailure == nil
        if report.failure == nil {
            // A stopped provider fails the run with its message; every device still has an
            // outcome (failed: provider_stopped), so the counts must add up all the same.
            let reasons = [stoppedProviders, reconcileFailure].compactMap { $0 }
            if !reasons.isEmpty {
                report.failure = reasons.joined(separator: "; ")
                report.failureExit = reconcileFailure != nil ? .internalError : .providerStopped
            }
        }
        report.stop = stages.stop
        if report.failure != nil {
            report.status = .failed
        } else if stages.stop != nil {
            report.status = .stopped
        } else if stages.source.error != nil {
            report.status = .inputError
        } else if report.counts.failedTotal > 0 {
            report.status = .completedWithFailures
        } else if report.counts.rejectedTotal + report.counts.linesRejected > 0 {
            report.status = .completedWithRejects
        }
        return report
    }

    /// Why `counts` do not reconcile, or nil: every device one outcome in total, then per
    /// provider, then (when the input was read without error) every line the reader completed
    /// reached the sink, as a recipient or as blank.
    static func reconciliationProblem(_ c: RunCounts, source: SourceReport) -> String? {
        if !c.reconciles {
            // Sending outcomes are named when there are any (a dry run has none).
            var outcomes = ""
            if c.sentTotal > 0 { outcomes += " + \(c.sentTotal) sent" }
            if c.invalidTokenTotal > 0 { outcomes += " + \(c.invalidTokenTotal) invalid token" }
            if c.failedTotal > 0 { outcomes += " + \(c.failedTotal) failed" }
            if c.unsentTotal > 0 { outcomes += " + \(c.unsentTotal) unsent" }
            return "counts do not reconcile: \(c.devices) devices read, \(c.writtenTotal) written\(outcomes) + \(c.rejectedTotal) rejected + \(c.skippedTotal) skipped"
        }
        if !c.reconcilesByProvider {
            return "counts do not reconcile per provider: \(ProviderReconciliation.describe(c))"
        }
        if !c.reconcilesByArm {
            let arms = (c.byArm ?? []).map { "\($0.devices) devices = \($0.settled) settled" }.joined(separator: ", ")
            return "counts do not reconcile per experiment variant: \(arms), of \(c.devices) devices"
        }
        if source.error == nil, c.lines + c.blankLines != source.physicalLines {
            return "counts do not reconcile: \(source.physicalLines) lines read, \(c.lines) processed + \(c.blankLines) blank"
        }
        return nil
    }
}
