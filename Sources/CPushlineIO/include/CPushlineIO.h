#ifndef CPUSHLINEIO_H
#define CPUSHLINEIO_H
// PushlineIO's C side: system constants Swift's C library modules do not import. They sit
// behind _GNU_SOURCE, which the Glibc module is built without, so they are read here, in a file
// compiled with it.

/// O_DIRECT (write around the page cache) where the platform has it; 0 where it has not.
int cpushlineio_open_flag_direct(void);

#endif
