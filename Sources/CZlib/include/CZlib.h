#ifndef CZLIB_H
#define CZLIB_H
// Typed wrappers for zlib's macro APIs (inflateInit2/deflateInit2 are macros Swift cannot call).
#include <zlib.h>

static inline int czlib_inflate_init2(z_streamp stream, int window_bits) {
    return inflateInit2(stream, window_bits);
}
static inline int czlib_deflate_init2(z_streamp stream, int level, int window_bits) {
    return deflateInit2(stream, level, Z_DEFLATED, window_bits, 8, Z_DEFAULT_STRATEGY);
}
#endif
