import PushlineCore
import PushlineDelivery

/// The lines of a sending run's result files (docs/output.md), one JSON object each, written
/// with `JSONWriter` (every string escaped, the output valid JSON whatever the bytes hold).
///
/// - `sent.ndjson`: `recipient`, `line`, `device`, `provider`, `apns_id` (APNs) or `message`
///   (FCM's message name; `provider_id` for any other provider), `attempts`, and
///   `possible_duplicate: true` only when an earlier attempt may have been delivered.
/// - `invalid-tokens.ndjson`: `token`, `platform`, `provider`, `reason`, `timestamp` (only when
///   APNs gave one: milliseconds since 1970 when the token stopped being valid), `recipient`,
///   `line`, `device`. A delivered device whose token the provider replaced (ADM) has a line too:
///   `reason: "replaced"` with `new_token`.
/// - `failed.ndjson`: `recipient`, `line`, `device`, `provider`, `reason`, `status` (the last
///   HTTP status, 0 when there was none), `attempts` (0 when it never reached the wire), and
///   `possible_duplicate: true` only when an attempt may have reached the provider (a request
///   cancelled in flight).
/// - `unsent.ndjson` (a stopped run): `recipient`, `line`, `device`, `provider`, `token` (the
///   device token or FCM target the request was for), `reason` (`run_stopped`), `attempts` (0:
///   never sent), and `possible_duplicate: true` only when an attempt may have reached the
///   provider: what a later run needs to send them.
///
/// In an experiment every line also carries `variant`: the variant its recipient was assigned.
enum ResultLines {
    static func sent(_ request: OutgoingRequest, variant: String? = nil, provider: Provider, outcome: DeliveryOutcome, into w: inout JSONWriter) {
        w.beginObject()
        identity(request, variant: variant, into: &w)
        w.writeKey("provider")
        w.writeString(provider.rawValue)
        w.writeKey(provider.profile.sentIDKey)
        if let id = outcome.providerID { w.writeString(id) } else { w.writeNull() }
        w.writeKey("attempts")
        w.writeInt(outcome.attempts)
        if outcome.possibleDuplicate {
            w.writeKey("possible_duplicate")
            w.writeBool(true)
        }
        end(&w)
    }

    static func invalidToken(_ request: OutgoingRequest, variant: String? = nil, provider: Provider, platform: String, outcome: DeliveryOutcome, into w: inout JSONWriter) {
        tokenLine(request, provider: provider, platform: platform, reason: outcome.reasonCode ?? "unknown", into: &w)
        if let timestamp = outcome.invalidTokenTimestamp {
            w.writeKey("timestamp")
            // Int64 fits Int on the 64-bit platforms Pushline builds for.
            w.writeInt(Int(truncatingIfNeeded: timestamp))
        }
        identity(request, variant: variant, into: &w)
        end(&w)
    }

    /// A sent device whose provider named a new token (ADM's 200 with another registration id):
    /// `token` (the one sent), `platform`, `provider`, `reason: "replaced"`, `new_token`, and the
    /// device's identity. Its `sent.ndjson` line says it was delivered.
    static func replacedToken(_ request: OutgoingRequest, variant: String? = nil, provider: Provider, platform: String, replacement: String, into w: inout JSONWriter) {
        tokenLine(request, provider: provider, platform: platform, reason: replacedReason, into: &w)
        w.writeKey("new_token")
        w.writeString(replacement)
        identity(request, variant: variant, into: &w)
        end(&w)
    }

    static let replacedReason = "replaced"

    /// `{"token":…,"platform":…,"provider":…,"reason":…`: how an `invalid-tokens.ndjson` line starts.
    private static func tokenLine(_ request: OutgoingRequest, provider: Provider, platform: String, reason: String, into w: inout JSONWriter) {
        w.beginObject()
        w.writeKey("token")
        w.writeString(utf8: request.bytes[request.entry.target])
        w.writeKey("platform")
        w.writeString(platform)
        w.writeKey("provider")
        w.writeString(provider.rawValue)
        w.writeKey("reason")
        w.writeString(reason)
    }

    static func failed(_ request: OutgoingRequest, variant: String? = nil, provider: Provider, outcome: DeliveryOutcome, into w: inout JSONWriter) {
        w.beginObject()
        identity(request, variant: variant, into: &w)
        w.writeKey("provider")
        w.writeString(provider.rawValue)
        w.writeKey("reason")
        w.writeString(outcome.reasonCode ?? "unknown")
        w.writeKey("status")
        w.writeInt(outcome.httpStatus ?? 0)
        w.writeKey("attempts")
        w.writeInt(outcome.attempts)
        if outcome.possibleDuplicate {
            w.writeKey("possible_duplicate")
            w.writeBool(true)
        }
        end(&w)
    }

    static func unsent(_ request: OutgoingRequest, variant: String? = nil, provider: Provider, outcome: DeliveryOutcome, into w: inout JSONWriter) {
        w.beginObject()
        identity(request, variant: variant, into: &w)
        w.writeKey("provider")
        w.writeString(provider.rawValue)
        w.writeKey("token")
        w.writeString(utf8: request.bytes[request.entry.target])
        w.writeKey("reason")
        w.writeString(outcome.reasonCode ?? DeliveryOutcome.runStoppedReason)
        w.writeKey("attempts")
        w.writeInt(outcome.attempts)
        if outcome.possibleDuplicate {
            w.writeKey("possible_duplicate")
            w.writeBool(true)
        }
        end(&w)
    }

    /// `"recipient":R,"line":N,"device":I` (with `"variant":V` after the recipient in an
    /// experiment): the recipient as the input had it (JSON text the
    /// encoder wrote: a string or a number), null when the request carries none.
    private static func identity(_ request: OutgoingRequest, variant: String?, into w: inout JSONWriter) {
        w.writeKey("recipient")
        let recipient = request.bytes[request.entry.recipient]
        if recipient.isEmpty { w.writeNull() } else { w.writeRawValue(recipient) }
        if let variant {
            w.writeKey("variant")
            w.writeString(variant)
        }
        w.writeKey("line")
        w.writeInt(request.entry.line)
        w.writeKey("device")
        w.writeInt(Int(request.entry.device))
    }

    private static func end(_ w: inout JSONWriter) {
        w.endObject()
        w.appendRaw(byte: 0x0A)
        w.resetSeparator()
    }
}
