import Logging

/// One log line at the end of a deduping run: how many tokens it remembered and skipped, and a
/// warning when the digest set stopped growing (later copies of new tokens were not skipped).
enum DedupeLog {
    static func report(_ dedupe: TokenDedupe, logger: Logger) {
        let stats = dedupe.statistics
        let metadata: Logger.Metadata = [
            "distinct_tokens": "\(stats.tokens)", "duplicates_skipped": "\(stats.skipped)",
            "digest_table_bytes": "\(stats.slots * 8)",
        ]
        if stats.saturated {
            logger.warning("dedupe: the token digest set reached its bound; later copies of tokens beyond it were not skipped", metadata: metadata)
        } else {
            logger.info("dedupe", metadata: metadata)
        }
    }
}
