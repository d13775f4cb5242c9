import PushlineCore

/// Where an encoder put one request's parts in the batch arena; `CampaignEncoder` turns it into
/// the `RequestEntry`.
struct RequestParts {
    var target = ByteRange.empty
    var body = ByteRange.empty
    var headers = ByteRange.empty
    var truncated = false
}

extension ByteRange {
    /// `start..<end` of the arena, or a reject when the batch arena passed 4 GiB (a 32-bit range
    /// cannot hold it; never seen with batches of a few megabytes, but never a trap).
    static func checked(_ start: Int, _ end: Int) throws(EncodeFailure) -> ByteRange {
        guard let range = ByteRange(start, end) else {
            throw EncodeFailure(RejectReason("internal_error", "the batch's request arena is over 4 GiB: the request was not encoded"))
        }
        return range
    }
}

extension RejectReason {
    static func headerBlockValueTooLong(_ what: String) -> RejectReason {
        RejectReason("invalid_token", "\(what) is over \(RequestHeaderBlock.maxValueBytes) bytes")
    }
}
