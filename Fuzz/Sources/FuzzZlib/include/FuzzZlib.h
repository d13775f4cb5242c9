#ifndef FUZZ_ZLIB_H
#define FUZZ_ZLIB_H
// zlib, the audience-gzip target's second opinion (the reader inflates with ISA-L).
#include <zlib.h>

static inline int fuzzzlib_inflate_init_gzip(z_streamp stream) { return inflateInit2(stream, 31); }
#endif
