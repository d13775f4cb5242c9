internal import CNGHTTP2

/// nghttp2's callbacks. Each finds its connection in the session's user data and its stream in
/// the connection's table; none allocates on the common path.
enum HTTP2Callbacks {
    static func make() -> OpaquePointer? {
        var callbacks: OpaquePointer?
        guard nghttp2_session_callbacks_new(&callbacks) == 0, let callbacks else { return nil }
        nghttp2_session_callbacks_set_send_callback(callbacks, http2Send)
        nghttp2_session_callbacks_set_send_data_callback(callbacks, http2SendData)
        nghttp2_session_callbacks_set_on_frame_send_callback(callbacks, http2FrameSent)
        nghttp2_session_callbacks_set_on_frame_recv_callback(callbacks, http2FrameReceived)
        nghttp2_session_callbacks_set_on_begin_headers_callback(callbacks, http2BeginHeaders)
        nghttp2_session_callbacks_set_on_header_callback(callbacks, http2Header)
        nghttp2_session_callbacks_set_on_invalid_header_callback(callbacks, http2InvalidHeader)
        nghttp2_session_callbacks_set_on_data_chunk_recv_callback(callbacks, http2DataChunk)
        nghttp2_session_callbacks_set_on_stream_close_callback(callbacks, http2StreamClosed)
        return callbacks
    }
}

private let temporalFailure = Int32(NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE.rawValue)
private let wouldBlock = Int(NGHTTP2_ERR_WOULDBLOCK.rawValue)
private let callbackFailure = Int32(NGHTTP2_ERR_CALLBACK_FAILURE.rawValue)

// Each callback borrows its connection and stream (`HTTP2Connection.with`, `withStream`):
// nghttp2 calls back about ten times per request, and a retain and release in each was a
// tenth of the transfer thread's time.

/// Frames go into the connection's gathered write (encrypted once per turn).
private let http2Send: nghttp2_send_callback = { _, data, length, _, user in
    HTTP2Connection.with(user, otherwise: wouldBlock) { connection in
        guard let data else { return wouldBlock }
        if connection.frames.count >= NGHTTP2TransferEngine.maxGatheredFrames { return wouldBlock }
        connection.frames.append(contentsOf: UnsafeBufferPointer(start: data, count: length))
        return length
    }
}

/// A DATA frame whose payload is the request's body, copied from the batch's bytes straight into
/// the gathered write (`NGHTTP2_DATA_FLAG_NO_COPY`): no copy inside nghttp2.
private let http2SendData: nghttp2_send_data_callback = { _, _, header, length, source, user in
    HTTP2Connection.with(user, otherwise: callbackFailure) { connection in
        guard let header, let pointer = source?.pointee.ptr else { return callbackFailure }
        return HTTP2Stream.with(pointer) { stream in
            let body = stream.request.body
            guard stream.bodyCopied &+ length <= body.count else { return callbackFailure }
            connection.frames.append(contentsOf: UnsafeBufferPointer(start: header, count: 9))
            if length > 0, let base = body.baseAddress {
                connection.frames.append(contentsOf: UnsafeRawBufferPointer(start: base + stream.bodyCopied, count: length))
            }
            stream.bodyCopied &+= length
            return 0
        }
    }
}

/// How much of the body the next DATA frame carries; the bytes themselves go in `http2SendData`.
let http2ReadBody: nghttp2_data_source_read_callback = { _, _, _, length, flags, source, _ in
    guard let pointer = source?.pointee.ptr, let flags else { return Int(NGHTTP2_ERR_CALLBACK_FAILURE.rawValue) }
    return HTTP2Stream.with(pointer) { stream in
        let remaining = stream.request.body.count &- stream.bodyFramed
        let taken = Swift.min(remaining, length)
        stream.bodyFramed &+= taken
        flags.pointee |= UInt32(NGHTTP2_DATA_FLAG_NO_COPY.rawValue)
        if stream.bodyFramed == stream.request.body.count { flags.pointee |= UInt32(NGHTTP2_DATA_FLAG_EOF.rawValue) }
        return taken
    }
}

/// A request's HEADERS went into the gathered write: it is on the wire once the socket takes it.
/// A GOAWAY of ours means nghttp2 ended the session (a connection error it found, such as an
/// answer's header block HPACK cannot decode, RFC 9113 §4.3): the connection closes once it is
/// written.
private let http2FrameSent: nghttp2_on_frame_send_callback = { _, frame, user in
    HTTP2Connection.with(user, otherwise: 0) { connection in
        guard let frame else { return 0 }
        switch UInt32(frame.pointee.hd.type) {
        case NGHTTP2_HEADERS.rawValue:
            connection.withStream(frame.pointee.hd.stream_id, otherwise: ()) { stream in
                guard !stream.gathered else { return }
                stream.gathered = true
                connection.gatheredStreams.append(stream)
            }
        case NGHTTP2_GOAWAY.rawValue:
            connection.sentGoaway(errorCode: frame.pointee.goaway.error_code)
        default:
            break
        }
        return 0
    }
}

private let http2FrameReceived: nghttp2_on_frame_recv_callback = { session, frame, user in
    HTTP2Connection.with(user, otherwise: 0) { connection in
        guard let frame else { return 0 }
        let id = frame.pointee.hd.stream_id
        let endStream = frame.pointee.hd.flags & UInt8(NGHTTP2_FLAG_END_STREAM.rawValue) != 0
        switch UInt32(frame.pointee.hd.type) {
        case NGHTTP2_HEADERS.rawValue:
            if connection.headerBlockStream == id { connection.headerBlockStream = 0 }
            if endStream { connection.withStream(id, otherwise: ()) { if $0.status >= 200 { $0.complete = true } } }
        case NGHTTP2_DATA.rawValue:
            if endStream { connection.withStream(id, otherwise: ()) { if $0.status >= 200 { $0.complete = true } } }
        case NGHTTP2_RST_STREAM.rawValue:
            connection.withStream(id, otherwise: ()) { $0.peerResetCode = frame.pointee.rst_stream.error_code }
        case NGHTTP2_GOAWAY.rawValue:
            let last = frame.pointee.goaway.last_stream_id
            connection.goawayLastStreamID = Swift.min(connection.goawayLastStreamID ?? last, last)
        case NGHTTP2_SETTINGS.rawValue:
            if frame.pointee.hd.flags & UInt8(NGHTTP2_FLAG_ACK.rawValue) == 0, let session {
                connection.remoteMaxStreams = Int(nghttp2_session_get_remote_settings(session, NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS))
            }
        default:
            break
        }
        return 0
    }
}

/// Which stream's header block is being decoded: if HPACK fails, that answer broke the
/// connection.
private let http2BeginHeaders: nghttp2_on_begin_headers_callback = { _, frame, user in
    HTTP2Connection.with(user, otherwise: 0) { connection in
        guard let frame else { return 0 }
        let id = frame.pointee.hd.stream_id
        connection.headerBlockStream = id
        connection.withStream(id, otherwise: ()) { stream in
            stream.headersBegun = true
            stream.headerListBytes = 0
        }
        return 0
    }
}

private let http2Header: nghttp2_on_header_callback = { _, frame, name, nameLength, value, valueLength, _, user in
    HTTP2Connection.with(user, otherwise: 0) { connection in
        guard let frame, let name, let value else { return 0 }
        return connection.withStream(frame.pointee.hd.stream_id, otherwise: 0) { stream in
            guard stream.countField(nameLength: nameLength, valueLength: valueLength) else { return temporalFailure }
            let nameBytes = UnsafeBufferPointer(start: name, count: nameLength)
            let valueBytes = UnsafeRawBufferPointer(start: value, count: valueLength)
            if nameLength == 7, nameBytes.elementsEqual(":status".utf8) {
                guard valueLength == 3, valueBytes.allSatisfy({ (0x30...0x39).contains($0) }) else {
                    stream.problem = .badHeaderBytes
                    return temporalFailure
                }
                stream.status = valueBytes.reduce(0) { $0 * 10 + Int($1 - 0x30) }
                // A new response (after an interim 1xx): only the final one's headers count.
                if !stream.captured.isEmpty { stream.captured = [] }
                return 0
            }
            connection.engine.capture(name: nameBytes, value: valueBytes, into: stream)
            return 0
        }
    }
}

/// A field nghttp2 finds invalid: NUL, CR or LF reject the answer; any other fault (another
/// control byte, blanks around the value) is not a reason to lose it: the field is read
/// leniently or dropped (`capture`), so a `Retry-After` that does not parse is ignored.
private let http2InvalidHeader: nghttp2_on_invalid_header_callback = { _, frame, name, nameLength, value, valueLength, _, user in
    HTTP2Connection.with(user, otherwise: 0) { connection in
        guard let frame, let name, let value else { return 0 }
        return connection.withStream(frame.pointee.hd.stream_id, otherwise: 0) { stream in
            guard stream.countField(nameLength: nameLength, valueLength: valueLength) else { return temporalFailure }
            // NUL, CR or LF make the answer malformed (RFC 9113 §8.2.1): it is rejected, alone.
            let bytes = UnsafeBufferPointer(start: value, count: valueLength)
            if bytes.contains(where: { $0 == 0 || $0 == 0x0A || $0 == 0x0D }) || UnsafeBufferPointer(start: name, count: nameLength).contains(where: { $0 == 0 || $0 == 0x0A || $0 == 0x0D }) {
                stream.problem = .badHeaderBytes
                return temporalFailure
            }
            connection.engine.capture(
                name: UnsafeBufferPointer(start: name, count: nameLength), value: UnsafeRawBufferPointer(start: value, count: valueLength),
                into: stream, lenient: true
            )
            return 0
        }
    }
}

private let http2DataChunk: nghttp2_on_data_chunk_recv_callback = { session, _, id, data, length, user in
    HTTP2Connection.with(user, otherwise: 0) { connection in
        guard let data else { return 0 }
        return connection.withStream(id, otherwise: 0) { stream in
            stream.bodyBytesSeen &+= length
            let limit = connection.engine.maxResponseBodyBytes
            let room = limit &- stream.body.count
            if room > 0 { stream.body.append(contentsOf: UnsafeBufferPointer(start: data, count: Swift.min(room, length))) }
            if length > room { stream.bodyTruncated = true }
            // Past the hard cap the answer is not read further: its status stands, the stream is reset.
            if stream.bodyBytesSeen > NGHTTP2TransferEngine.maxAnswerBodyBytes, stream.problem == nil {
                stream.problem = .bodyTooLarge
                if let session { _ = nghttp2_submit_rst_stream(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), id, UInt32(NGHTTP2_CANCEL.rawValue)) }
            }
            return 0
        }
    }
}

private let http2StreamClosed: nghttp2_on_stream_close_callback = { _, id, errorCode, user in
    HTTP2Connection.with(user, otherwise: 0) { connection in
        // Held strongly here, not borrowed: leaving the connection's table and then the
        // engine's may drop its last other reference while this callback still reads it.
        guard let stream = connection.stream(id) else { return 0 }
        connection.remove(stream)
        // Cancelled (a timeout, shutdown): its response was made then.
        if stream.finished { return 0 }
        let end: TransportStreamEnd
        if stream.complete {
            end = .answered
        } else if stream.problem == .bodyTooLarge, stream.status >= 200 {
            end = .answered
        } else if let problem = stream.problem {
            end = .answerRejected(problem)
        } else if let code = stream.peerResetCode {
            end = code == UInt32(NGHTTP2_REFUSED_STREAM.rawValue) ? .refused : .resetByPeer(errorCode: code)
        } else if let last = connection.goawayLastStreamID, id > last {
            end = .refused
        } else if !stream.written && !stream.gathered {
            end = .notSent
        } else if stream.headersBegun, errorCode == UInt32(NGHTTP2_PROTOCOL_ERROR.rawValue) {
            // nghttp2 found the answer malformed (RFC 9113 §8.1.1) and reset the stream itself.
            end = .answerRejected(.badHeaderBytes)
        } else {
            end = .lost
        }
        connection.engine.streamEnded(stream, end)
        return 0
    }
}

extension HTTP2Stream {
    /// Adds one field of the answer to its header list (RFC 9113 §6.5.2's measure: name, value
    /// and 32 bytes); false, with the problem noted, once the list is over our limit.
    fileprivate func countField(nameLength: Int, valueLength: Int) -> Bool {
        headerListBytes &+= nameLength &+ valueLength &+ 32
        guard headerListBytes > NGHTTP2TransferEngine.maxAnswerHeaderListBytes else { return true }
        problem = .headerListTooLarge
        return false
    }
}
