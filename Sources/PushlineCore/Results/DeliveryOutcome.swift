/// How one device's request ended: exactly one per device, whichever sink handled it.
///
/// A struct over a private enum, like the project's errors, so cases can grow without breaking
/// callers; `kind` is what counting and result files switch on.
public struct DeliveryOutcome: Sendable, Equatable, CustomStringConvertible {
    public enum Kind: String, Sendable, CaseIterable, Hashable {
        /// Dry run: the request was written to `requests-<provider>.ndjson`.
        case written
        /// The provider accepted the request.
        case sent
        /// The provider says the token (or subscription) is no longer valid: prune it.
        case invalidToken = "invalid_token"
        /// Not sendable as encoded (bad record, template failure, over a limit…).
        case rejected
        /// The provider refused it or it could not be delivered within the retry budget.
        case failed
        /// Deliberately not addressed (not targeted, shard, dedupe, quiet hours).
        case skipped
        /// Read, but the run was stopped (SIGTERM / SIGINT) before the provider answered for it:
        /// never sent, waiting for a retry, or cancelled in flight. `unsent.ndjson` lists them so
        /// a later run can send them (`possibleDuplicate` when an attempt may have reached the
        /// provider).
        case unsent
    }

    private enum Storage: Sendable, Equatable {
        case written
        case sent(providerID: String?, attempts: Int, possibleDuplicate: Bool)
        case invalidToken(reason: String, timestamp: Int64?)
        case rejected(RejectReason)
        case failed(reason: String, httpStatus: Int, attempts: Int, possibleDuplicate: Bool)
        case skipped(SkipReason)
        case unsent(reason: String, attempts: Int, possibleDuplicate: Bool)
    }

    private let storage: Storage
    /// A sent device's new token, named by the provider (ADM's 200 with another registration
    /// id): delivered, and the old token should be replaced.
    public private(set) var replacementToken: String?

    public static let written = DeliveryOutcome(storage: .written)

    /// `providerID`: APNs `apns-id` or the FCM message name (`projects/…/messages/…`).
    /// `possibleDuplicate`: an earlier attempt failed after its body may have reached the server.
    /// `replacementToken`: the provider named a new token for the device (see `replacementToken`).
    public static func sent(providerID: String?, attempts: Int, possibleDuplicate: Bool = false, replacementToken: String? = nil) -> Self {
        var outcome = DeliveryOutcome(storage: .sent(providerID: providerID, attempts: max(1, attempts), possibleDuplicate: possibleDuplicate))
        outcome.replacementToken = replacementToken
        return outcome
    }

    /// `reason`: the provider's reason (`Unregistered`, `BadDeviceToken`, `UNREGISTERED`…);
    /// `timestamp`: APNs 410's `timestamp` (milliseconds since 1970) when the token stopped being valid.
    public static func invalidToken(reason: String, timestamp: Int64? = nil) -> Self {
        DeliveryOutcome(storage: .invalidToken(reason: reason, timestamp: timestamp))
    }

    public static func rejected(_ reason: RejectReason) -> Self {
        DeliveryOutcome(storage: .rejected(reason))
    }

    /// `httpStatus`: the last response's status, 0 when there was none (timeout, reset).
    /// `attempts`: sends made, 0 when the request never reached the wire (its provider stopped,
    /// the run was cancelled, no sender for its provider).
    /// `possibleDuplicate`: an attempt may have reached the provider although none was answered
    /// with success (a request cancelled in flight), so the device may have been notified.
    public static func failed(reason: String, httpStatus: Int, attempts: Int, possibleDuplicate: Bool = false) -> Self {
        DeliveryOutcome(storage: .failed(reason: reason, httpStatus: httpStatus, attempts: max(0, attempts), possibleDuplicate: possibleDuplicate))
    }

    /// The reason code of a device the run read but did not get an answer for because it was
    /// stopped (SIGTERM / SIGINT).
    public static let runStoppedReason = "run_stopped"

    /// A device the run read but did not settle with its provider because the run was stopped.
    /// `attempts`: sends made (0: never sent; more: it was waiting for a retry or was cancelled in
    /// flight). `possibleDuplicate`: an attempt may have reached the provider, so sending it again
    /// may notify the device twice.
    public static func unsent(reason: String = runStoppedReason, attempts: Int, possibleDuplicate: Bool) -> Self {
        DeliveryOutcome(storage: .unsent(reason: reason, attempts: max(0, attempts), possibleDuplicate: possibleDuplicate))
    }

    public static func skipped(_ reason: SkipReason) -> Self {
        DeliveryOutcome(storage: .skipped(reason))
    }

    public var kind: Kind {
        switch storage {
        case .written: .written
        case .sent: .sent
        case .invalidToken: .invalidToken
        case .rejected: .rejected
        case .failed: .failed
        case .skipped: .skipped
        case .unsent: .unsent
        }
    }

    /// The code counts are kept by: the reject, skip, invalid-token or failure reason; nil for
    /// written and sent.
    public var reasonCode: String? {
        switch storage {
        case .written, .sent: nil
        case .invalidToken(let reason, _): reason
        case .rejected(let reason): reason.code
        case .failed(let reason, _, _, _): reason
        case .skipped(let reason): reason.code
        case .unsent(let reason, _, _): reason
        }
    }

    public var providerID: String? {
        if case .sent(let id, _, _) = storage { return id }
        return nil
    }

    /// Attempts made (sent, failed and unsent; 0 for the others).
    public var attempts: Int {
        switch storage {
        case .sent(_, let attempts, _), .failed(_, _, let attempts, _), .unsent(_, let attempts, _): attempts
        default: 0
        }
    }

    /// An attempt may have reached the provider besides the one that counts: a sent request that
    /// was resent, or a failed or unsent one that may have been delivered.
    public var possibleDuplicate: Bool {
        switch storage {
        case .sent(_, _, let duplicate), .failed(_, _, _, let duplicate), .unsent(_, _, let duplicate): duplicate
        default: false
        }
    }

    /// The HTTP status of a failure (0: no response).
    /// The same outcome, flagged as one whose device may have been notified twice (a resumed
    /// run sending again what a killed run may have had on the wire). Others are unchanged.
    public func markedPossibleDuplicate() -> DeliveryOutcome {
        switch storage {
        case .sent(let id, let attempts, _): .sent(providerID: id, attempts: attempts, possibleDuplicate: true, replacementToken: replacementToken)
        case .failed(let reason, let status, let attempts, _): .failed(reason: reason, httpStatus: status, attempts: attempts, possibleDuplicate: true)
        case .unsent(let reason, let attempts, _): .unsent(reason: reason, attempts: attempts, possibleDuplicate: true)
        default: self
        }
    }

    public var httpStatus: Int? {
        if case .failed(_, let status, _, _) = storage { return status }
        return nil
    }

    public var invalidTokenTimestamp: Int64? {
        if case .invalidToken(_, let timestamp) = storage { return timestamp }
        return nil
    }

    public var rejectReason: RejectReason? {
        if case .rejected(let reason) = storage { return reason }
        return nil
    }

    public var skipReason: SkipReason? {
        if case .skipped(let reason) = storage { return reason }
        return nil
    }

    public var description: String {
        switch storage {
        case .written: "written"
        case .sent(let id, let attempts, let duplicate):
            "sent (\(id ?? "no id"), \(attempts) attempt\(attempts == 1 ? "" : "s")\(duplicate ? ", possible duplicate" : ""))"
        case .invalidToken(let reason, let timestamp): "invalid token (\(reason)\(timestamp.map { ", since \($0)" } ?? ""))"
        case .rejected(let reason): "rejected (\(reason))"
        case .failed(let reason, let status, let attempts, let duplicate):
            "failed (\(reason), status \(status), \(attempts) attempts\(duplicate ? ", possible duplicate" : ""))"
        case .skipped(let reason): "skipped (\(reason.code))"
        case .unsent(let reason, let attempts, let duplicate):
            "unsent (\(reason), \(attempts) attempts\(duplicate ? ", possible duplicate" : ""))"
        }
    }
}
