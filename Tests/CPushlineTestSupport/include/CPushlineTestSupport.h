#ifndef CPUSHLINETESTSUPPORT_H
#define CPUSHLINETESTSUPPORT_H
#include <sys/types.h>

// The test suite's way to start and wait for child processes, in C because what it needs
// (posix_spawn's closefrom and chdir actions, pidfd_open, the wait-status macros) sits behind
// _GNU_SOURCE or in macros Swift cannot import.
//
// Foundation's Process is not used: on Swift 6.3.1 for Linux its child side over-reads d_name
// while closing descriptors (swift-corelibs-foundation #5472) and crashed about one full test run
// in five, and it could miss a child's exit when many ended at once.

/// Starts `path` with `argv` (NULL-terminated, argv[0] included) and `envp` (NULL: this
/// process's environment), in `directory` (NULL: this one). `input`, `output` and `error` become
/// the child's descriptors 0, 1 and 2 (-1: inherit); every other descriptor is closed in the
/// child. Returns 0 and stores the child's pid, or returns an errno value (an executable that
/// cannot be run is reported here, not as the child's exit).
int cpushlinetestsupport_spawn(pid_t *pid, const char *path, char *const argv[], char *const envp[],
                               const char *directory, int input, int output, int error);

/// Waits up to `timeout_ms` (negative: for good) for `pid` to end, without reaping it.
/// Returns 1 when it has ended, 0 on timeout, -1 with errno set when the system has no such
/// child (ECHILD: not this process's, or reaped already). A failing pidfd falls back to polling,
/// so the limit holds.
int cpushlinetestsupport_await_exit(pid_t pid, int timeout_ms);

/// Reaps `pid` if it has ended (`block`: waits for it to end). Returns 1 and stores how it
/// ended (`code`: the exit status, or the signal number when `*signalled` is 1), 0 if it is
/// still running, -1 with errno on error (ECHILD: not this process's child, or reaped already).
int cpushlinetestsupport_reap(pid_t pid, int block, int *code, int *signalled);

/// An inotify descriptor (non-blocking, close-on-exec) to add watches to; -1 with errno.
int cpushlinetestsupport_watch_open(void);

/// Watches `path` (a file, or a folder and the files directly in it) for writes, creations,
/// renames into it, closes after writing and deletions. Returns the watch, or -1 with errno
/// (ENOENT: it does not exist yet).
int cpushlinetestsupport_watch_add(int watch, const char *path);

/// Waits up to `timeout_ms` (negative: for good) until something watched changed or `pid` (if
/// positive) ended, and takes every change reported so far. Returns 1 for a change, 2 when
/// the process ended (with or without changes), 0 on timeout, -1 with errno.
int cpushlinetestsupport_watch_wait(int watch, pid_t pid, int timeout_ms);

#endif
