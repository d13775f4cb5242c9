#ifndef CCURL_H
#define CCURL_H
// Typed wrappers for libcurl's variadic setters and getters: Swift cannot call C variadics, so
// each C argument kind gets one wrapper (and, below, one workaround for a libcurl 7.88 bug and
// the socket options the transfer loop sets on libcurl's sockets); the
// non-variadic calls (curl_multi_poll, curl_multi_wakeup, curl_multi_info_read...) are called
// from Swift directly.
#include <curl/curl.h>

// libcurl 7.88's reset of HTTP/2 streams the server already closed is dropped by
// h2_reset_filter.c (the one piece of logic in this module; it says why). Whether libcurl's
// calls reach the filter (0 with a static libcurl, say), and how many resets it forwarded and
// dropped since the process started.
int ccurl_h2_reset_filter_active(void);
void ccurl_h2_reset_filter_counts(unsigned long *forwarded, unsigned long *dropped);

// curl_easy_setopt, one per argument kind.
static inline CURLcode ccurl_easy_setopt_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode ccurl_easy_setopt_offset(CURL *handle, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode ccurl_easy_setopt_string(CURL *handle, CURLoption option, const char *value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode ccurl_easy_setopt_pointer(CURL *handle, CURLoption option, void *value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode ccurl_easy_setopt_slist(CURL *handle, CURLoption option, struct curl_slist *value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode ccurl_easy_setopt_blob(CURL *handle, CURLoption option, struct curl_blob *value) {
    return curl_easy_setopt(handle, option, value);
}
// Write and header callbacks share this C type.
static inline CURLcode ccurl_easy_setopt_write_callback(CURL *handle, CURLoption option, curl_write_callback value) {
    return curl_easy_setopt(handle, option, value);
}

// CURLOPT_PREREQFUNCTION (7.80+): called each time libcurl is about to send the request on a
// connection, its own resends included.
static inline CURLcode ccurl_easy_setopt_prereq_callback(CURL *handle, CURLoption option, curl_prereq_callback value) {
    return curl_easy_setopt(handle, option, value);
}

// CURLOPT_SOCKOPTFUNCTION and CURLOPT_CLOSESOCKETFUNCTION: the transfer loop learns the sockets
// of its connections (to cork them while curl writes a turn, Transport/Curl/ConnectionCork.swift).
static inline CURLcode ccurl_easy_setopt_sockopt_callback(CURL *handle, CURLoption option, curl_sockopt_callback value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode ccurl_easy_setopt_closesocket_callback(CURL *handle, CURLoption option, curl_closesocket_callback value) {
    return curl_easy_setopt(handle, option, value);
}

// TCP_CORK on one of libcurl's sockets (shim.c: the constants sit behind _DEFAULT_SOURCE and in
// Linux headers the Swift Glibc module does not cover): 0, or -1 with errno. Where the platform
// has no TCP_CORK it does nothing and answers 0.
int ccurl_socket_set_cork(curl_socket_t socket, int on);
// Tests: whether TCP_CORK is set on a socket (1, 0, or -1 with errno), and how many bytes its
// send queue holds that were not sent yet (SIOCOUTQNSD; -1 with errno, or where Linux's
// SIOCOUTQNSD is missing).
int ccurl_socket_cork(curl_socket_t socket);
int ccurl_socket_unsent_bytes(curl_socket_t socket);

// curl_easy_getinfo, one per result kind.
static inline CURLcode ccurl_easy_getinfo_long(CURL *handle, CURLINFO info, long *value) {
    return curl_easy_getinfo(handle, info, value);
}
static inline CURLcode ccurl_easy_getinfo_offset(CURL *handle, CURLINFO info, curl_off_t *value) {
    return curl_easy_getinfo(handle, info, value);
}
// CURLINFO_PRIVATE is documented as char * but holds whatever CURLOPT_PRIVATE was given.
static inline CURLcode ccurl_easy_getinfo_pointer(CURL *handle, CURLINFO info, void **value) {
    return curl_easy_getinfo(handle, info, value);
}

// CURLINFO_TLS_SSL_PTR: the TLS backend and its per-connection object (OpenSSL: SSL *).
static inline CURLcode ccurl_easy_getinfo_tls_session(CURL *handle, CURLINFO info, struct curl_tlssessioninfo **value) {
    return curl_easy_getinfo(handle, info, value);
}

// curl_multi_setopt.
static inline CURLMcode ccurl_multi_setopt_long(CURLM *handle, CURLMoption option, long value) {
    return curl_multi_setopt(handle, option, value);
}
#endif
