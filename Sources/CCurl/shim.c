// Most wrappers are static inline in include/CCurl.h; the socket options live here, where the
// system headers they need do not leak into the Swift module.
#define _GNU_SOURCE
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#ifdef __linux__
#include <linux/sockios.h>
#endif
#include "CCurl.h"

#ifdef TCP_CORK
int ccurl_socket_set_cork(curl_socket_t socket, int on) {
    return setsockopt(socket, IPPROTO_TCP, TCP_CORK, &on, sizeof on);
}

int ccurl_socket_cork(curl_socket_t socket) {
    int on = 0;
    socklen_t size = sizeof on;
    return getsockopt(socket, IPPROTO_TCP, TCP_CORK, &on, &size) == 0 ? (on != 0) : -1;
}
#else
// No TCP_CORK: nothing is corked, and nothing says it is.
int ccurl_socket_set_cork(curl_socket_t socket, int on) { (void)socket; (void)on; return 0; }
int ccurl_socket_cork(curl_socket_t socket) { (void)socket; return 0; }
#endif

int ccurl_socket_unsent_bytes(curl_socket_t socket) {
#ifdef SIOCOUTQNSD
    int count = 0;
    return ioctl(socket, SIOCOUTQNSD, &count) == 0 ? count : -1;
#else
    (void)socket;
    errno = ENOTSUP;
    return -1;
#endif
}
