#define _GNU_SOURCE
#include <fcntl.h>
#include "CPushlineIO.h"

int cpushlineio_open_flag_direct(void) {
#ifdef O_DIRECT
    return O_DIRECT;
#else
    return 0;
#endif
}
