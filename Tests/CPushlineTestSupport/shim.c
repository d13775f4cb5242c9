#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/inotify.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "CPushlineTestSupport.h"

extern char **environ;

int cpushlinetestsupport_spawn(pid_t *pid, const char *path, char *const argv[], char *const envp[],
                               const char *directory, int input, int output, int error) {
    posix_spawn_file_actions_t actions;
    int result = posix_spawn_file_actions_init(&actions);
    if (result != 0) return result;
    const int sources[3] = {input, output, error};
    for (int target = 0; target < 3 && result == 0; target++) {
        if (sources[target] >= 0) result = posix_spawn_file_actions_adddup2(&actions, sources[target], target);
    }
    // Nothing of the test process leaks into the child: a pipe's write end held by another
    // test's child would keep that pipe open and its reader waiting.
    if (result == 0) result = posix_spawn_file_actions_addclosefrom_np(&actions, 3);
    if (result == 0 && directory != NULL) result = posix_spawn_file_actions_addchdir_np(&actions, directory);
    // The child starts with every signal at its default and none blocked, as from a shell: the
    // test runner's own dispositions (SIGPIPE ignored, say) and mask are not the child's, and
    // the stop tests' SIGTERM must reach pushline's handler.
    posix_spawnattr_t attributes;
    if (result == 0) result = posix_spawnattr_init(&attributes);
    if (result != 0) {
        posix_spawn_file_actions_destroy(&actions);
        return result;
    }
    sigset_t all, none;
    sigfillset(&all);
    sigemptyset(&none);
    result = posix_spawnattr_setsigdefault(&attributes, &all);
    if (result == 0) result = posix_spawnattr_setsigmask(&attributes, &none);
    if (result == 0) result = posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
    if (result == 0) result = posix_spawn(pid, path, &actions, &attributes, argv, envp != NULL ? envp : environ);
    posix_spawnattr_destroy(&attributes);
    posix_spawn_file_actions_destroy(&actions);
    return result;
}

int cpushlinetestsupport_await_exit(pid_t pid, int timeout_ms) {
    int descriptor = (int)syscall(SYS_pidfd_open, pid, 0);
    if (descriptor >= 0) {
        // A pidfd turns readable when the process ends; it does not reap it.
        struct pollfd watch = {.fd = descriptor, .events = POLLIN};
        int ready;
        do {
            ready = poll(&watch, 1, timeout_ms);
        } while (ready < 0 && errno == EINTR);
        close(descriptor);
        if (ready >= 0) return ready > 0 ? 1 : 0;
        // poll failed: the loop below still honours the limit (a caller kills on 0).
    }
    // No pidfd (kernels before 5.3, or no descriptor left): look every 5 ms, without reaping.
    struct timespec step = {.tv_sec = 0, .tv_nsec = 5000000};
    for (long waited = 0; timeout_ms < 0 || waited < timeout_ms; waited += 5) {
        siginfo_t info = {0};
        if (waitid(P_PID, (id_t)pid, &info, WEXITED | WNOHANG | WNOWAIT) != 0) return -1;
        if (info.si_pid == pid) return 1;
        nanosleep(&step, NULL);
    }
    return 0;
}

int cpushlinetestsupport_reap(pid_t pid, int block, int *code, int *signalled) {
    int status = 0;
    pid_t reaped;
    do {
        reaped = waitpid(pid, &status, block ? 0 : WNOHANG);
    } while (reaped < 0 && errno == EINTR);
    if (reaped < 0) return -1;
    if (reaped == 0) return 0;
    *signalled = WIFSIGNALED(status) ? 1 : 0;
    *code = WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status);
    return 1;
}

int cpushlinetestsupport_watch_open(void) {
    return inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
}

int cpushlinetestsupport_watch_add(int watch, const char *path) {
    return inotify_add_watch(watch, path, IN_MODIFY | IN_CREATE | IN_MOVED_TO | IN_CLOSE_WRITE | IN_DELETE | IN_DELETE_SELF);
}

int cpushlinetestsupport_watch_wait(int watch, pid_t pid, int timeout_ms) {
    int process = pid > 0 ? (int)syscall(SYS_pidfd_open, pid, 0) : -1;
    struct pollfd watches[2] = {{.fd = watch, .events = POLLIN}, {.fd = process, .events = POLLIN}};
    int ready;
    do {
        ready = poll(watches, process >= 0 ? 2 : 1, timeout_ms);
    } while (ready < 0 && errno == EINTR);
    int saved = errno;
    if (process >= 0) close(process);
    if (ready < 0) {
        errno = saved;
        return -1;
    }
    if (ready == 0) return 0;
    // Take every event queued so far: the caller looks again at what it waits for.
    char events[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
    while (read(watch, events, sizeof events) > 0) {}
    return (process >= 0 && (watches[1].revents & POLLIN)) ? 2 : 1;
}
