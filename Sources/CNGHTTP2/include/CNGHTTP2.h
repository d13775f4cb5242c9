#ifndef CNGHTTP2_H
#define CNGHTTP2_H
// The HTTP/2 engine's C side: nghttp2 and OpenSSL are called from Swift directly; this header
// only wraps what Swift cannot call (OpenSSL's macros) and gives epoll a layout Swift can use
// (glibc packs `struct epoll_event` on x86-64), one typed wrapper per C argument kind.
#include <nghttp2/nghttp2.h>
#include <openssl/ssl.h>
#include <openssl/err.h>
#include <openssl/x509v3.h>
#include <openssl/pem.h>
#include <stdint.h>

// OpenSSL macros.
int cnghttp2_ssl_set_host_name(SSL *ssl, const char *name);
long cnghttp2_ssl_ctx_set_mode(SSL_CTX *context, long mode);
int cnghttp2_ssl_ctx_set_min_tls12(SSL_CTX *context);
// The last OpenSSL error on this thread as text (empty when none); clears the queue.
void cnghttp2_ssl_error_text(char *buffer, size_t size);
void cnghttp2_ssl_clear_errors(void);

// epoll, with the event's data as a 64-bit token.
int cnghttp2_epoll_create(void);
int cnghttp2_epoll_add(int epoll, int fd, uint32_t events, uint64_t token);
int cnghttp2_epoll_modify(int epoll, int fd, uint32_t events, uint64_t token);
int cnghttp2_epoll_remove(int epoll, int fd);
// Waits up to `timeout` ms; fills `tokens` and `events` (both `capacity` long); returns the
// count, 0 on timeout or EINTR, -1 on another error.
int cnghttp2_epoll_wait(int epoll, uint64_t *tokens, uint32_t *events, int capacity, int timeout);
extern const uint32_t cnghttp2_epollin;
extern const uint32_t cnghttp2_epollout;
extern const uint32_t cnghttp2_epollerr;
extern const uint32_t cnghttp2_epollhup;

// A non-blocking eventfd: the loop's wake-up from other threads.
int cnghttp2_eventfd(void);
void cnghttp2_eventfd_signal(int fd);
void cnghttp2_eventfd_drain(int fd);

// Sockets: a non-blocking TCP socket for `family` with TCP_NODELAY, its connect (0 done,
// 1 in progress, -errno failed), the result of an asynchronous connect (0 or an errno), and
// reads and writes that report -errno (EAGAIN included) instead of setting errno.
int cnghttp2_socket(int family);
int cnghttp2_connect(int fd, const void *address, unsigned int length);
int cnghttp2_connect_result(int fd);
long cnghttp2_read(int fd, void *buffer, size_t count);
long cnghttp2_write(int fd, const void *buffer, size_t count);
#endif
