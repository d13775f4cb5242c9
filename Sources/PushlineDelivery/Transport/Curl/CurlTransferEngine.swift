internal import CCurl
import Foundation

/// The libcurl engine: one multi handle, driven as perform → info_read → poll. It carries the
/// workarounds libcurl 7.88 needs (this folder); the nghttp2 engine (Transport/HTTP2) needs none.
final class CurlTransferEngine: TransferEngine {
    let multi: UnsafeMutableRawPointer
    private let configuration: TransportConfiguration
    private let limits: SlotLimits
    private let trustAnchors: TrustAnchors?
    private let caBundle: CABundleChoice
    private let proxyEnvironment = ProxyEnvironment()
    /// `CURLOPT_RESOLVE` entries (`configuration.pinnedAddresses`), made once and set on every
    /// handle; freed with the multi handle.
    private let pinnedAddresses: UnsafeMutablePointer<curl_slist>?
    private var slots: [TransferSlot] = []
    private var freeSlots: [TransferSlot] = []
    /// Slots whose transfer is in curl's hands, for cancellation.
    private var active: [ObjectIdentifier: TransferSlot] = [:]
    /// Responses of this turn, handed out by `perform` and `wait`.
    private var batch: [TransportResponse] = []
    /// This loop's connection sockets, corked while curl writes a turn. It outlives the multi
    /// handle, whose connections call back into it as they close.
    let cork = ConnectionCork()

    init(configuration: TransportConfiguration, trustAnchors: TrustAnchors?) throws(TransportError) {
        guard CurlGlobal.initialised else { throw TransportError.curlSetup("curl_global_init failed") }
        guard let multi = curl_multi_init() else { throw TransportError.curlSetup("curl_multi_init failed") }
        self.multi = multi
        self.configuration = configuration
        self.trustAnchors = trustAnchors
        limits = SlotLimits(
            maxBodyBytes: configuration.maxResponseBodyBytes,
            capturedNames: configuration.capturedHeaderNames.map { Array($0.lowercased().utf8) },
            maxHeaderValueBytes: configuration.maxHeaderValueBytes,
            // Without the check, a connection that negotiated HTTP/1.1 is used as it is.
            alpn: configuration.allowsHTTP1 ? nil : ALPNReader.load(),
            cork: cork
        )
        caBundle = CABundleChoice(trustAnchors: trustAnchors)
        var pinned: UnsafeMutablePointer<curl_slist>?
        for entry in configuration.pinnedAddresses {
            guard let appended = curl_slist_append(pinned, entry) else {
                curl_slist_free_all(pinned)
                curl_multi_cleanup(multi)
                throw TransportError.curlSetup("curl_slist_append failed")
            }
            pinned = appended
        }
        pinnedAddresses = pinned
        let options: [(CURLMoption, Int)] = [
            (CURLMOPT_PIPELINING, Int(CURLPIPE_MULTIPLEX)),
            (CURLMOPT_MAX_HOST_CONNECTIONS, configuration.connections),
            (CURLMOPT_MAX_CONCURRENT_STREAMS, configuration.streamsPerConnection),
            // Keep every allowed connection cached when idle between bursts.
            (CURLMOPT_MAXCONNECTS, configuration.connections),
        ]
        for (option, value) in options where ccurl_multi_setopt_long(multi, option, value) != CURLM_OK {
            curl_slist_free_all(pinned)
            curl_multi_cleanup(multi)
            throw TransportError.curlSetup("curl_multi_setopt \(option.rawValue) refused")
        }
    }

    // MARK: - TransferEngine

    func perform(into completions: inout [TransportResponse]) {
        var running: Int32 = 0
        cork.whileCorked { curl_multi_perform(multi, &running) }
        readCompletions()
        takeBatch(into: &completions)
    }

    func wait(timeoutMilliseconds: Int32, into completions: inout [TransportResponse]) {
        // curl's own timers (timeouts, connects) shorten this wait as needed; `wake` ends it.
        curl_multi_poll(multi, nil, 0, timeoutMilliseconds < 0 ? Int32.max : timeoutMilliseconds, nil)
    }

    func start(_ request: consuming TransportRequest, into completions: inout [TransportResponse]) {
        startTransfer(request)
        takeBatch(into: &completions)
    }

    func cancelAll(into completions: inout [TransportResponse]) {
        for slot in Array(active.values) {
            finish(slot, code: Int32(CURLE_ABORTED_BY_CALLBACK.rawValue), cancelled: true)
        }
        takeBatch(into: &completions)
    }

    var inFlightCount: Int { active.count }

    func takeCounters() -> (connectionsOpened: Int, wireSends: UInt64) {
        defer {
            connectionsOpenedSinceLastPublish = 0
            wireSendsSinceLastPublish = 0
        }
        return (connectionsOpenedSinceLastPublish, wireSendsSinceLastPublish)
    }

    func wake() { curl_multi_wakeup(multi) }

    private func takeBatch(into completions: inout [TransportResponse]) {
        guard !batch.isEmpty else { return }
        completions.append(contentsOf: batch)
        batch.removeAll(keepingCapacity: true)
    }

    private var connectionsOpenedSinceLastPublish = 0
    private var wireSendsSinceLastPublish: UInt64 = 0

    /// Turns every finished transfer into a response for this loop's batch.
    private func readCompletions() {
        var remaining: Int32 = 0
        while let message = curl_multi_info_read(multi, &remaining) {
            guard message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle else { continue }
            let code = message.pointee.data.result
            var pointer: UnsafeMutableRawPointer?
            guard ccurl_easy_getinfo_pointer(easy, CURLINFO_PRIVATE, &pointer) == CURLE_OK, let pointer else { continue }
            finish(TransferSlot.from(pointer), code: Int32(bitPattern: code.rawValue), cancelled: false)
        }
    }

    private func finish(_ slot: TransferSlot, code: Int32, cancelled: Bool) {
        curl_multi_remove_handle(multi, slot.easy)
        active[ObjectIdentifier(slot)] = nil
        let response = response(for: slot, code: code, cancelled: cancelled)
        wireSendsSinceLastPublish &+= UInt64(response.wireSends)
        batch.append(response)
        slot.release()
        // A request that needed more than one clean send leaves state in its handle.
        if !cancelled, response.result != .response || response.wireSends != 1 {
            guard renew(slot) else { return }
        }
        freeSlots.append(slot)
    }

    private func response(for slot: TransferSlot, code: Int32, cancelled: Bool) -> TransportResponse {
        let easy = slot.easy
        var status = 0, version = 0, connects = 0
        _ = ccurl_easy_getinfo_long(easy, CURLINFO_RESPONSE_CODE, &status)
        _ = ccurl_easy_getinfo_long(easy, CURLINFO_HTTP_VERSION, &version)
        _ = ccurl_easy_getinfo_long(easy, CURLINFO_NUM_CONNECTS, &connects)
        if connects > 0 { connectionsOpenedSinceLastPublish += connects }
        let sends = slot.wireSends
        let ok = code == Int32(CURLE_OK.rawValue)
        // What the server can be proven not to have processed (docs/delivery.md, "What libcurl
        // 7.88 can tell"): a request never written; or one whose last send libcurl reports
        // refused (REFUSED_STREAM, or above a GOAWAY's last stream id) when it stops resending:
        // CURLE_RECV_ERROR with no message but its give-up text. Its silent resends cannot be
        // told apart from resends after a lost connection, so earlier sends stay "may have".
        let lastSendRefused = code == Int32(CURLE_RECV_ERROR.rawValue) && sends > 0 && status == 0
            && slot.errorBufferEquals("Connection died, tried 5 times before giving up")
        let provenUnprocessed = sends == 0 || lastSendRefused
        let mayHaveBeenDelivered = status > 0 || sends > (lastSendRefused ? 1 : 0)
        var detail = slot.errorDetail
        let result: TransportResult
        if cancelled {
            result = .cancelled
        } else if let refused = slot.refusedALPN, code == Int32(CURLE_ABORTED_BY_CALLBACK.rawValue) {
            result = .notHTTP2
            let name = refused.isEmpty ? "nothing" : String(decoding: refused.map { (0x21...0x7E).contains($0) ? $0 : UInt8(ascii: "?") }, as: UTF8.self)
            detail = "the server at \(Self.origin(of: slot.request?.url)) does not speak HTTP/2 (ALPN gave \(name))"
        } else if status > 0, version != Int(CURL_HTTP_VERSION_2_0), !configuration.allowsHTTP1 {
            // Only reachable when the ALPN check could not run (a libcurl not on OpenSSL).
            result = .notHTTP2
            detail = "the server at \(Self.origin(of: slot.request?.url)) does not speak HTTP/2 (it answered over HTTP/1)"
        } else if ok, status > 0 {
            result = .response
        } else if code == Int32(CURLE_OPERATION_TIMEDOUT.rawValue) {
            result = .timedOut
        } else if ok || mayHaveBeenDelivered || sends > 0 {
            // Written, then no answer. libcurl 7.88 reports some stream ends as CURLE_OK with
            // status 0, the last stream a GOAWAY refuses as CURLE_HTTP2 with no message.
            result = .noResponse
        } else {
            result = .failed
        }
        let headers: CapturedHeaders
        if slot.anyHeaderCaptured {
            headers = CapturedHeaders(names: configuration.capturedHeaderNames, values: slot.headerValues)
        } else {
            headers = .none(configuration.capturedHeaderNames)
        }
        return TransportResponse(
            slot: slot.request?.slot ?? 0,
            result: result,
            status: status,
            headers: headers,
            body: slot.body.isEmpty ? [] : Array(slot.body),
            bodyTruncated: slot.bodyTruncated,
            curlCode: code,
            mayHaveBeenDelivered: mayHaveBeenDelivered,
            httpVersion: version,
            wireSends: sends,
            provenUnprocessed: provenUnprocessed,
            curlErrorDetail: detail,
            failure: result == .response || result == .cancelled ? nil : Self.failure(code: code, result: result, detail: detail)
        )
    }

    /// libcurl's code in the words both engines use.
    static func failure(code: Int32, result: TransportResult, detail: String?) -> TransportFailure {
        let kind: TransportFailure.Kind
        switch (result, code) {
        case (.notHTTP2, _): kind = .notHTTP2
        case (.timedOut, _), (_, 28): kind = .timeout
        case (_, 5), (_, 6): kind = .resolve
        case (_, 7): kind = .connect
        // CURLE_SSL_CERTPROBLEM 58, CURLE_PEER_FAILED_VERIFICATION 60, CURLE_SSL_CACERT_BADFILE 77,
        // CURLE_SSL_ISSUER_ERROR 83.
        case (_, 58), (_, 60), (_, 77), (_, 83): kind = .certificate
        case (_, 35): kind = .tls
        case (_, 0), (_, 16), (_, 52), (_, 55), (_, 56): kind = .connectionLost
        default: kind = .other
        }
        let text = detail ?? CurlText.description(of: code)
        return TransportFailure(kind, code == 0 ? text : "\(text) (curl error \(code))")
    }

    /// `https://host[:port]` of a request URL, for messages.
    static func origin(of url: String?) -> String {
        guard let url else { return "the configured endpoint" }
        var slashes = 0
        var end = url.utf8.endIndex
        for index in url.utf8.indices where url.utf8[index] == UInt8(ascii: "/") {
            slashes += 1
            if slashes == 3 { end = index; break }
        }
        return String(url[..<end])
    }

    private func startTransfer(_ request: TransportRequest) {
        let slot: TransferSlot
        if let free = freeSlots.popLast() {
            slot = free
        } else if let fresh = makeSlot() {
            slot = fresh
        } else {
            batch.append(Self.unsent(request, code: Int32(CURLE_OUT_OF_MEMORY.rawValue)))
            return
        }
        slot.request = request
        slot.resetResponse()
        let code = configure(slot, for: request)
        guard code == CURLE_OK, curl_multi_add_handle(multi, slot.easy) == CURLM_OK else {
            let failure = code == CURLE_OK ? CURLE_FAILED_INIT : code
            slot.release()
            freeSlots.append(slot)
            batch.append(Self.unsent(request, code: Int32(bitPattern: failure.rawValue)))
            return
        }
        active[ObjectIdentifier(slot)] = slot
    }

    static func unsent(_ request: TransportRequest, code: Int32, result: TransportResult = .failed) -> TransportResponse {
        .unsent(request, result: result, failure: failure(code: code, result: result, detail: nil), curlCode: code)
    }

    // MARK: - Easy handles

    private func makeSlot() -> TransferSlot? {
        guard let easy = curl_easy_init() else { return nil }
        let slot = TransferSlot(easy: easy, limits: limits)
        guard setBaseOptions(slot) else {
            curl_easy_cleanup(easy)
            return nil
        }
        slots.append(slot)
        return slot
    }

    /// Gives `slot` a fresh easy handle. libcurl 7.88 keeps its resend budget (5, reset only
    /// by `curl_easy_reset`) and a refused-stream flag (cleared by nothing) per handle, so a
    /// reused handle would resend less, or resend a request a later failure makes it believe
    /// refused. False (and the slot is dropped) when no handle can be made.
    private func renew(_ slot: TransferSlot) -> Bool {
        curl_easy_cleanup(slot.easy)
        if let easy = curl_easy_init() {
            slot.easy = easy
            if setBaseOptions(slot) { return true }
            curl_easy_cleanup(easy)
        }
        slots.removeAll { $0 === slot }
        return false
    }

    private func setBaseOptions(_ slot: TransferSlot) -> Bool {
        let easy = slot.easy
        var ok = true
        func set(_ option: CURLoption, _ value: Int) { ok = ok && ccurl_easy_setopt_long(easy, option, value) == CURLE_OK }
        set(CURLOPT_NOSIGNAL, 1)
        // Wait for a connection that can multiplex rather than open one per transfer.
        set(CURLOPT_PIPEWAIT, 1)
        // HTTP/2 negotiated by ALPN over TLS only: 7.88's h2c prior knowledge breaks on reuse.
        // 7.88 falls back to HTTP/1.1 when ALPN does not give h2: the pre-request callback
        // refuses such a connection before the request is written.
        set(CURLOPT_HTTP_VERSION, Int(CURL_HTTP_VERSION_2TLS))
        set(CURLOPT_SSL_VERIFYPEER, 1)
        set(CURLOPT_SSL_VERIFYHOST, 2)
        set(CURLOPT_FOLLOWLOCATION, 0)
        set(CURLOPT_CONNECTTIMEOUT_MS, configuration.connectTimeoutMilliseconds)
        // Each handle keeps an upload buffer (64 KiB by default in 7.88) and a download buffer
        // (16 KiB) for as long as it lives, and a lane keeps one handle per request in flight:
        // 2,000 handles held 160 MiB. A push body is at most a few KiB and an answer is cut at
        // `maxResponseBodyBytes`; larger ones go through in more than one piece.
        set(CURLOPT_UPLOAD_BUFFERSIZE, Self.uploadBufferBytes)
        set(CURLOPT_BUFFERSIZE, Self.downloadBufferBytes)
        ok = ok && ccurl_easy_setopt_string(easy, CURLOPT_PROTOCOLS_STR, "https") == CURLE_OK
        if let proxy = configuration.proxy {
            // The provider's `proxy:` key: this proxy for every host, the environment not read.
            ok = ok && ccurl_easy_setopt_string(easy, CURLOPT_PROXY, proxy) == CURLE_OK
            ok = ok && ccurl_easy_setopt_string(easy, CURLOPT_NOPROXY, "") == CURLE_OK
            if let path = caBundle.caInfo {
                ok = ok && ccurl_easy_setopt_string(easy, CURLOPT_PROXY_CAINFO, path) == CURLE_OK
            }
        } else {
            ok = ok && ccurl_easy_setopt_string(easy, CURLOPT_PROXY, proxyEnvironment.proxy) == CURLE_OK
            ok = ok && ccurl_easy_setopt_string(easy, CURLOPT_NOPROXY, proxyEnvironment.noProxy) == CURLE_OK
        }
        if let path = caBundle.caInfo {
            ok = ok && ccurl_easy_setopt_string(easy, CURLOPT_CAINFO, path) == CURLE_OK
        }
        if let pinnedAddresses {
            ok = ok && ccurl_easy_setopt_slist(easy, CURLOPT_RESOLVE, pinnedAddresses) == CURLE_OK
        }
        if caBundle.clearCAPath {
            ok = ok && ccurl_easy_setopt_string(easy, CURLOPT_CAPATH, nil) == CURLE_OK
        }
        ok = ok && ccurl_easy_setopt_pointer(easy, CURLOPT_ERRORBUFFER, UnsafeMutableRawPointer(slot.errorBuffer)) == CURLE_OK
        ok = ok && ccurl_easy_setopt_prereq_callback(easy, CURLOPT_PREREQFUNCTION, transferSlotPrerequest) == CURLE_OK
        ok = ok && ccurl_easy_setopt_pointer(easy, CURLOPT_PREREQDATA, slot.opaque) == CURLE_OK
        ok = ok && ccurl_easy_setopt_write_callback(easy, CURLOPT_WRITEFUNCTION, transferSlotWriteBody) == CURLE_OK
        ok = ok && ccurl_easy_setopt_pointer(easy, CURLOPT_WRITEDATA, slot.opaque) == CURLE_OK
        ok = ok && ccurl_easy_setopt_write_callback(easy, CURLOPT_HEADERFUNCTION, transferSlotHeaderLine) == CURLE_OK
        ok = ok && ccurl_easy_setopt_pointer(easy, CURLOPT_HEADERDATA, slot.opaque) == CURLE_OK
        ok = ok && ccurl_easy_setopt_pointer(easy, CURLOPT_PRIVATE, slot.opaque) == CURLE_OK
        ok = ok && ccurl_easy_setopt_sockopt_callback(easy, CURLOPT_SOCKOPTFUNCTION, connectionCorkSocketOpened) == CURLE_OK
        ok = ok && ccurl_easy_setopt_pointer(easy, CURLOPT_SOCKOPTDATA, cork.opaque) == CURLE_OK
        ok = ok && ccurl_easy_setopt_closesocket_callback(easy, CURLOPT_CLOSESOCKETFUNCTION, connectionCorkSocketClosing) == CURLE_OK
        ok = ok && ccurl_easy_setopt_pointer(easy, CURLOPT_CLOSESOCKETDATA, cork.opaque) == CURLE_OK
        return ok
    }

    /// libcurl 7.88's smallest upload buffer.
    static let uploadBufferBytes = 16_384
    static let downloadBufferBytes = 4_096

    /// The per-request options; the body is passed without a copy.
    private func configure(_ slot: TransferSlot, for request: TransportRequest) -> CURLcode {
        let easy = slot.easy
        guard let url = slot.joinURL(of: request) else { return CURLE_URL_MALFORMAT }
        var code = ccurl_easy_setopt_string(easy, CURLOPT_URL, url)
        guard code == CURLE_OK else { return code }
        if request.method == .get {
            code = ccurl_easy_setopt_string(easy, CURLOPT_CUSTOMREQUEST, nil)
            if code == CURLE_OK { code = ccurl_easy_setopt_long(easy, CURLOPT_HTTPGET, 1) }
        } else {
            // The size first: with POSTFIELDS alone curl would measure the body with strlen.
            code = ccurl_easy_setopt_offset(easy, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(request.body.count))
            if code == CURLE_OK {
                let bytes = request.body.baseAddress ?? UnsafeRawPointer(emptyBody)
                code = ccurl_easy_setopt_pointer(easy, CURLOPT_POSTFIELDS, UnsafeMutableRawPointer(mutating: bytes))
            }
            if code == CURLE_OK {
                code = request.method == .post
                    ? ccurl_easy_setopt_string(easy, CURLOPT_CUSTOMREQUEST, nil)
                    : request.method.name.withCString { ccurl_easy_setopt_string(easy, CURLOPT_CUSTOMREQUEST, $0) }
            }
        }
        guard code == CURLE_OK else { return code }
        let headers = slot.linkHeaders(of: request)
        guard headers.fits else { return CURLE_BAD_FUNCTION_ARGUMENT }
        code = ccurl_easy_setopt_slist(easy, CURLOPT_HTTPHEADER, headers.list)
        guard code == CURLE_OK else { return code }
        code = ccurl_easy_setopt_long(easy, CURLOPT_TIMEOUT_MS, request.timeoutMilliseconds)
        return code
    }

    /// What an empty body points at: curl needs a non-null POSTFIELDS even for 0 bytes.
    private let emptyBody: UnsafeMutableRawPointer = {
        let pointer = UnsafeMutableRawPointer.allocate(byteCount: 1, alignment: 1)
        pointer.storeBytes(of: 0, as: UInt8.self)
        return pointer
    }()

    func close() {
        for slot in slots { curl_easy_cleanup(slot.easy) }
        slots = []
        freeSlots = []
        curl_multi_cleanup(multi)
        curl_slist_free_all(pinnedAddresses)
        emptyBody.deallocate()
    }
}
