#include "CNGHTTP2.h"
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

int cnghttp2_ssl_set_host_name(SSL *ssl, const char *name) { return (int)SSL_set_tlsext_host_name(ssl, name); }
long cnghttp2_ssl_ctx_set_mode(SSL_CTX *context, long mode) { return SSL_CTX_set_mode(context, mode); }
int cnghttp2_ssl_ctx_set_min_tls12(SSL_CTX *context) { return (int)SSL_CTX_set_min_proto_version(context, TLS1_2_VERSION); }

void cnghttp2_ssl_error_text(char *buffer, size_t size) {
    if (size == 0) return;
    buffer[0] = 0;
    unsigned long code = ERR_get_error();
    if (code != 0) ERR_error_string_n(code, buffer, size);
    ERR_clear_error();
}
void cnghttp2_ssl_clear_errors(void) { ERR_clear_error(); }

const uint32_t cnghttp2_epollin = EPOLLIN;
const uint32_t cnghttp2_epollout = EPOLLOUT;
const uint32_t cnghttp2_epollerr = EPOLLERR;
const uint32_t cnghttp2_epollhup = EPOLLHUP | EPOLLRDHUP;

int cnghttp2_epoll_create(void) { return epoll_create1(EPOLL_CLOEXEC); }

int cnghttp2_epoll_add(int epoll, int fd, uint32_t events, uint64_t token) {
    struct epoll_event event = {.events = events, .data = {.u64 = token}};
    return epoll_ctl(epoll, EPOLL_CTL_ADD, fd, &event);
}
int cnghttp2_epoll_modify(int epoll, int fd, uint32_t events, uint64_t token) {
    struct epoll_event event = {.events = events, .data = {.u64 = token}};
    return epoll_ctl(epoll, EPOLL_CTL_MOD, fd, &event);
}
int cnghttp2_epoll_remove(int epoll, int fd) {
    struct epoll_event event = {0};
    return epoll_ctl(epoll, EPOLL_CTL_DEL, fd, &event);
}
int cnghttp2_epoll_wait(int epoll, uint64_t *tokens, uint32_t *events, int capacity, int timeout) {
    struct epoll_event ready[64];
    if (capacity > 64) capacity = 64;
    int count = epoll_wait(epoll, ready, capacity, timeout);
    if (count < 0) return errno == EINTR ? 0 : -1;
    for (int index = 0; index < count; index++) {
        tokens[index] = ready[index].data.u64;
        events[index] = ready[index].events;
    }
    return count;
}

int cnghttp2_eventfd(void) { return eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC); }
void cnghttp2_eventfd_signal(int fd) {
    uint64_t one = 1;
    ssize_t written = write(fd, &one, sizeof one);
    (void)written;  // EAGAIN: the counter is already non-zero, the loop will wake.
}
void cnghttp2_eventfd_drain(int fd) {
    uint64_t value;
    ssize_t got = read(fd, &value, sizeof value);
    (void)got;
}

int cnghttp2_socket(int family) {
    int fd = socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, IPPROTO_TCP);
    if (fd < 0) return -errno;
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
}
int cnghttp2_connect(int fd, const void *address, unsigned int length) {
    if (connect(fd, (const struct sockaddr *)address, (socklen_t)length) == 0) return 0;
    return errno == EINPROGRESS ? 1 : -errno;
}
int cnghttp2_connect_result(int fd) {
    int error = 0;
    socklen_t length = sizeof error;
    if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length) != 0) return errno;
    return error;
}
long cnghttp2_read(int fd, void *buffer, size_t count) {
    ssize_t got = read(fd, buffer, count);
    return got < 0 ? -errno : (long)got;
}
long cnghttp2_write(int fd, const void *buffer, size_t count) {
    ssize_t sent = send(fd, buffer, count, MSG_NOSIGNAL);
    return sent < 0 ? -errno : (long)sent;
}
