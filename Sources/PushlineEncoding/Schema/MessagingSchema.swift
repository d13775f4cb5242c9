import PushlineCore

/// SMS, MMS, email and open channels: delivered through a configured webhook.
extension NotificationSchema {
    /// SMS expiry cannot exceed 48 hours (Airship's maximum and default).
    public static let smsMaxExpiry = 172_800

    public static let sms = ObjectSchema("sms", [
        SchemaProperty("alert", .string()),
        SchemaProperty("expiry", .expiry),
        SchemaProperty("shorten_links", .boolean),
    ], refused: ["interactive": interactiveRefused(on: "sms")], rules: [smsAlertRule, smsExpiryRule])

    static let smsAlertRule: SchemaRule = { node, path, log, _ in
        guard let alert = node["alert"], let text = alert.stringValue, !isTemplated(text) else { return }
        let count = text.unicodeScalars.count
        if count > ProviderLimits.smsCharacters {
            log.error(path / "alert", "is \(count) characters, at most \(ProviderLimits.smsCharacters) allowed", at: alert)
        }
    }

    /// Relative expiries are checked here; absolute ones against the run clock when compiled.
    static let smsExpiryRule: SchemaRule = { node, path, log, _ in
        if let expiry = node["expiry"], let seconds = expiry.intValue, seconds > smsMaxExpiry {
            log.error(path / "expiry", "\(seconds) seconds is more than the 48 hours (172800 s) an SMS may wait", at: expiry)
        }
    }

    static let mmsSlide = ObjectSchema("mms.slides", [
        SchemaProperty("text", .string()),
        SchemaProperty("media", .object(ObjectSchema("mms.slides.media", [
            SchemaProperty("url", .string(.url), required: true),
            SchemaProperty("content_type", .enumeration([
                "image/jpeg", "image/png", "image/gif", "image/bmp", "video/mp4", "video/3gpp", "audio/mpeg", "audio/mp4",
            ]), required: true),
            SchemaProperty("content_length", .integer(1...5_000_000), required: true),
        ])), required: true),
    ])

    public static let mms = ObjectSchema("mms", [
        SchemaProperty("fallback_text", .string(), required: true),
        SchemaProperty("slides", .array(.object(mmsSlide), maxCount: 1), required: true),
        SchemaProperty("subject", .string()),
        SchemaProperty("shorten_links", .boolean),
    ], refused: ["interactive": interactiveRefused(on: "mms")], rules: [mmsSlidesRule])

    static let mmsSlidesRule: SchemaRule = { node, path, log, _ in
        if let slides = node["slides"], slides.sequenceElements?.isEmpty == true {
            log.error(path / "slides", "must hold one slide", at: slides)
        }
    }

    public static let email = ObjectSchema("email", [
        SchemaProperty("subject", .string(), required: true),
        SchemaProperty("html_body", .string()),
        SchemaProperty("plaintext_body", .string(), required: true),
        SchemaProperty("message_type", .enumeration(["transactional", "commercial"]), required: true),
        SchemaProperty("sender_name", .string(), required: true),
        SchemaProperty("sender_address", .string(), required: true),
        SchemaProperty("reply_to", .string(), required: true),
        SchemaProperty("bcc", .array(.string(.constant))),
        SchemaProperty("bypass_opt_in_level", .boolean),
        SchemaProperty("click_tracking", .boolean),
        SchemaProperty("open_tracking", .boolean),
        SchemaProperty("attachments", .array(.object(ObjectSchema("email.attachments", [
            SchemaProperty("id", .string(.constant), required: true),
        ])))),
        SchemaProperty("url_parameters", .stringMap()),
    ], refused: ["interactive": interactiveRefused(on: "email")], rules: [emailRules])

    /// Commercial email must carry an unsubscribe link in each body; bypassing opt-in levels is
    /// for transactional email only; body sizes when they are not personalized.
    static let emailRules: SchemaRule = { node, path, log, _ in
        let commercial = node["message_type"]?.stringValue == "commercial"
        if commercial {
            if let html = node["html_body"], let text = html.stringValue, !EmailUnsubscribe.htmlHasLink(text) {
                log.error(path / "html_body", "a commercial email's HTML body must contain an unsubscribe link: <a data-ua-unsubscribe=\"1\" title=\"unsubscribe\">Unsubscribe</a>", at: html)
            }
            if let plain = node["plaintext_body"], let text = plain.stringValue, !EmailUnsubscribe.plaintextHasLink(text) {
                log.error(path / "plaintext_body", "a commercial email's plain text body must contain [[ua-unsubscribe]] (optionally with href=\"…\")", at: plain)
            }
            if let bypass = node["bypass_opt_in_level"], bypass.boolValue == true {
                log.error(path / "bypass_opt_in_level", "is allowed only when message_type is transactional", at: bypass)
            }
        }
        // Airship: only the username part of the sender and reply-to addresses may be
        // personalized; the domain is fixed (it must be enabled at the email provider).
        for key in ["sender_address", "reply_to"] {
            guard let value = node[key], let text = value.stringValue else { continue }
            guard let at = text.lastIndex(of: "@") else {
                log.error(path / key, "expected an email address (username@domain), found '\(text)'", at: value)
                continue
            }
            let domain = String(text[text.index(after: at)...])
            if isTemplated(domain) {
                log.error(path / key, "only the username part may be personalized; the domain '\(domain)' must be written out", at: value)
            } else if !EmailDomain.isValid(domain) {
                log.error(path / key, "'\(domain)' is not a valid domain", at: value)
            }
            if !isTemplated(text), text[..<at].isEmpty {
                log.error(path / key, "the username part is empty", at: value)
            }
        }
        for key in ["html_body", "plaintext_body"] {
            if let body = node[key], let text = body.stringValue, !isTemplated(text), text.utf8.count > ProviderLimits.emailBody {
                log.error(path / key, "is \(text.utf8.count) bytes, at most \(ProviderLimits.emailBody) (100 KB) allowed", at: body)
            }
        }
    }

    public static let openChannel = ObjectSchema("open channel", [
        SchemaProperty("alert", .string()),
        SchemaProperty("title", .string()),
        SchemaProperty("summary", .string()),
        SchemaProperty("media_attachment", .string(.url)),
        SchemaProperty("extra", .stringMap()),
        SchemaProperty("interactive", .object(interactive)),
    ])
}

/// The unsubscribe markers Airship's email rules name. Quotes may be straight or typographic
/// (the reference prints both) and `[[ua_unsubscribe]]` is accepted beside `[[ua-unsubscribe]]`.
enum EmailUnsubscribe {
    static func htmlHasLink(_ html: String) -> Bool {
        let normalized = String(html.map { $0 == "“" || $0 == "”" ? "\"" : $0 })
        return normalized.contains("data-ua-unsubscribe=\"1\"") || normalized.contains("data-ua-unsubscribe='1'")
    }

    static func plaintextHasLink(_ text: String) -> Bool {
        text.contains("[[ua-unsubscribe") || text.contains("[[ua_unsubscribe")
    }
}

/// Domains of sender and reply-to addresses: dot-separated labels of letters, digits and hyphens
/// (not at a label's ends), at least two labels, at most 253 characters.
enum EmailDomain {
    static func isValid(_ domain: String) -> Bool {
        guard (3...253).contains(domain.utf8.count) else { return false }
        let labels = domain.split(separator: ".", omittingEmptySubsequences: false)
        guard labels.count >= 2 else { return false }
        return labels.allSatisfy { label in
            let bytes = Array(label.utf8)
            guard (1...63).contains(bytes.count), bytes.first != UInt8(ascii: "-"), bytes.last != UInt8(ascii: "-") else { return false }
            return bytes.allSatisfy { b in
                (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || b == UInt8(ascii: "-")
            }
        }
    }
}
