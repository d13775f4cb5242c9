// Drops the RST_STREAM that libcurl 7.88 sends for an HTTP/2 stream the server has already
// closed; forwards every other one unchanged.
//
// Why (Debian's curl 7.88.1, lib/http2.c): when curl learns a stream's end by reading past it
// (an answer with no body, as APNs sends, or a body without content-length),
// http2_handle_stream_close() sets `stream->closed = FALSE` "to prevent an infinite loop", and
// http2_data_done() then submits RST_STREAM(STREAM_CLOSED) because `!stream->closed`. So every
// empty-bodied answer earns the server a reset on a closed stream, which RFC 9113 §5.1 forbids,
// and which nghttp2-based servers count towards their rapid-reset limit (1,000 + 33/s per
// connection) before they answer GOAWAY: a new TLS connection, and resent streams, about every
// 1,100 requests (docs/delivery.md, "libcurl 7.88 behaviour").
//
// How: this definition of nghttp2_submit_rst_stream is linked into every program that links
// CCurl; libcurl.so references the symbol, so the linker exports ours and libcurl's call binds
// here first. The real function comes from dlsym(RTLD_NEXT). A reset is dropped only when all
// of these hold, so a cancelled or timed-out transfer still resets its open stream:
//   - the code is STREAM_CLOSED (7.88 uses it only in http2_data_done);
//   - nghttp2 has no stream object for the id (open and half-closed streams have one);
//   - the id is not a request still queued inside nghttp2 (set_stream_user_data answers 0 for a
//     queued request and an error for a stream that is gone; a queued one's reset is forwarded,
//     which cancels it, so the user data this probe clears is never read).
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include "CCurl.h"

typedef struct nghttp2_session nghttp2_session;
typedef struct nghttp2_stream nghttp2_stream;

enum { CCURL_NGHTTP2_STREAM_CLOSED = 0x5, CCURL_NGHTTP2_ERR_INVALID_ARGUMENT = -501 };

typedef int (*submit_rst_stream_fn)(nghttp2_session *, uint8_t, int32_t, uint32_t);
typedef nghttp2_stream *(*find_stream_fn)(nghttp2_session *, int32_t);
typedef int (*set_stream_user_data_fn)(nghttp2_session *, int32_t, void *);

static submit_rst_stream_fn real_submit_rst_stream;
static find_stream_fn find_stream;
static set_stream_user_data_fn set_stream_user_data;
static atomic_ulong forwarded_count, dropped_count;

__attribute__((constructor)) static void ccurl_h2_reset_filter_init(void) {
    real_submit_rst_stream = (submit_rst_stream_fn)dlsym(RTLD_NEXT, "nghttp2_submit_rst_stream");
    find_stream = (find_stream_fn)dlsym(RTLD_NEXT, "nghttp2_session_find_stream");
    set_stream_user_data = (set_stream_user_data_fn)dlsym(RTLD_NEXT, "nghttp2_session_set_stream_user_data");
}

int nghttp2_submit_rst_stream(nghttp2_session *session, uint8_t flags, int32_t stream_id, uint32_t error_code) {
    if (!real_submit_rst_stream) ccurl_h2_reset_filter_init();
    if (!real_submit_rst_stream) return CCURL_NGHTTP2_ERR_INVALID_ARGUMENT;
    if (error_code == CCURL_NGHTTP2_STREAM_CLOSED && stream_id > 0 && find_stream && set_stream_user_data &&
        find_stream(session, stream_id) == NULL && set_stream_user_data(session, stream_id, NULL) != 0) {
        atomic_fetch_add_explicit(&dropped_count, 1, memory_order_relaxed);
        return 0;
    }
    atomic_fetch_add_explicit(&forwarded_count, 1, memory_order_relaxed);
    return real_submit_rst_stream(session, flags, stream_id, error_code);
}

int ccurl_h2_reset_filter_active(void) {
    return dlsym(RTLD_DEFAULT, "nghttp2_submit_rst_stream") == (void *)nghttp2_submit_rst_stream;
}

void ccurl_h2_reset_filter_counts(unsigned long *forwarded, unsigned long *dropped) {
    *forwarded = atomic_load_explicit(&forwarded_count, memory_order_relaxed);
    *dropped = atomic_load_explicit(&dropped_count, memory_order_relaxed);
}
