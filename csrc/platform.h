/* The platform layer: what the engine asks of the operating system beyond threads and locks
 * (thread.h), behind one small interface with one implementation per platform.
 *
 *   poller     which sockets are ready (the loop thread's wait)
 *   notifier   a handle one thread makes readable for another: the loop thread's wake-up (in
 *              its poller beside the sockets) and each completion queue's, which an event loop
 *              watches (its fileno())
 *   latch      a word set once, that a blocking caller waits on with a timeout: "the transfer
 *              is delivered"
 *   sockets    opened so that a child process does not inherit them
 *
 * Implementations (docs/architecture.md, "The platform layer", says what each does and why):
 *
 *   "linux"    epoll, eventfd, futex                                       platform_linux.c
 *   "posix"    poll(), a pipe, condition variables on CLOCK_MONOTONIC      platform_posix.c
 *              (macOS, the BSDs; also built on Linux, where it runs the whole suite)
 *   "windows"  select(), a loopback socket pair, WaitOnAddress             platform_windows.c
 *
 * Linux builds have two and pick one at import (rx_platform_select: REQUESTX_PLATFORM=posix);
 * the others have one. The choice is made before the first engine starts and never changes.
 */
#ifndef RX_PLATFORM_H
#define RX_PLATFORM_H

#include <stddef.h>
#include <stdint.h>

#ifdef _WIN32
#include <winsock2.h>
typedef SOCKET rx_socket_t; /* what libcurl's curl_socket_t is there */
#define RX_SOCKET_BAD INVALID_SOCKET
#else
typedef int rx_socket_t;
#define RX_SOCKET_BAD (-1)
#endif

/* Readiness, as a poller reports it and as watches ask for it (RX_POLL_ERR: reported only). */
enum { RX_POLL_IN = 1, RX_POLL_OUT = 2, RX_POLL_ERR = 4 };

typedef struct rx_poll_event {
    rx_socket_t fd;
    unsigned events;
} rx_poll_event;

typedef struct rx_poller rx_poller; /* the implementation's own */

typedef struct rx_notifier {
    rx_socket_t read_end;  /* what pollers and event loops watch */
    rx_socket_t write_end; /* the same descriptor where one does both (eventfd) */
} rx_notifier;

typedef struct rx_platform {
    const char *name;

    /* A poller, or NULL (errno says why). */
    rx_poller *(*poller_new)(void);
    void (*poller_free)(rx_poller *p);
    /* Watch fd for `events` (RX_POLL_IN and/or RX_POLL_OUT), replacing what it was watched
     * for; `watched` is the caller's belief that it is watched now. 0, or -1. */
    int (*poller_set)(rx_poller *p, rx_socket_t fd, unsigned events, int watched);
    /* Stop watching fd (nothing happens if it was not watched, or was closed already). */
    void (*poller_remove)(rx_poller *p, rx_socket_t fd);
    /* Wait up to timeout_ms (< 0: for ever, 0: just look) for ready sockets: their number
     * (at most max, written to out), 0 on timeout, -1 when interrupted by a signal. */
    int (*poller_wait)(rx_poller *p, rx_poll_event *out, int max, int timeout_ms);

    /* 0, or -1 (errno says why). Both ends are non-blocking. */
    int (*notifier_open)(rx_notifier *n);
    void (*notifier_close)(rx_notifier *n);
    /* Make read_end readable (any thread). */
    void (*notifier_raise)(rx_notifier *n);
    /* Make read_end unreadable again, consuming every raise so far. */
    void (*notifier_clear)(rx_notifier *n);

    /* Set the latch (0 -> 1) and wake its waiters. */
    void (*latch_set)(int *latch);
    /* Wait until the latch is set: 0; or timeout_ms (< 0: for ever) passed, or a signal came
     * first: -1. */
    int (*latch_wait)(int *latch, long timeout_ms);
} rx_platform;

/* An implementation's table, from the static functions of its file, named as the fields. */
#define RX_PLATFORM(platform_name)                                                                 \
    {                                                                                              \
        .name = platform_name, .poller_new = poller_new, .poller_free = poller_free,               \
        .poller_set = poller_set, .poller_remove = poller_remove, .poller_wait = poller_wait,      \
        .notifier_open = notifier_open, .notifier_close = notifier_close,                          \
        .notifier_raise = notifier_raise, .notifier_clear = notifier_clear,                        \
        .latch_set = latch_set, .latch_wait = latch_wait,                                          \
    }

/* The implementation in use (the first of this build's, until rx_platform_select). */
extern const rx_platform *rx_platform_in_use;

/* Use the implementation named `name` (NULL or "": the build's default). 0; or -1 when this
 * build has none of that name (the names it has are written to `names`). */
int rx_platform_select(const char *name, char *names, size_t names_len);

/* The implementations. */
extern const rx_platform rx_platform_posix;
extern const rx_platform rx_platform_linux;
extern const rx_platform rx_platform_windows;

static inline const char *rx_platform_name(void) { return rx_platform_in_use->name; }

static inline rx_poller *rx_poller_new(void) { return rx_platform_in_use->poller_new(); }
static inline void rx_poller_free(rx_poller *p) { rx_platform_in_use->poller_free(p); }
static inline int rx_poller_set(rx_poller *p, rx_socket_t fd, unsigned events, int watched)
{
    return rx_platform_in_use->poller_set(p, fd, events, watched);
}
static inline void rx_poller_remove(rx_poller *p, rx_socket_t fd)
{
    rx_platform_in_use->poller_remove(p, fd);
}
static inline int rx_poller_wait(rx_poller *p, rx_poll_event *out, int max, int timeout_ms)
{
    return rx_platform_in_use->poller_wait(p, out, max, timeout_ms);
}

static inline int rx_notifier_open(rx_notifier *n) { return rx_platform_in_use->notifier_open(n); }
static inline void rx_notifier_close(rx_notifier *n) { rx_platform_in_use->notifier_close(n); }
static inline void rx_notifier_raise(rx_notifier *n) { rx_platform_in_use->notifier_raise(n); }
static inline void rx_notifier_clear(rx_notifier *n) { rx_platform_in_use->notifier_clear(n); }

/* A latch starts at 0 (unset). */
static inline int rx_latch_is_set(const int *latch)
{
    return __atomic_load_n(latch, __ATOMIC_ACQUIRE) == 1;
}
static inline void rx_latch_set(int *latch) { rx_platform_in_use->latch_set(latch); }
static inline int rx_latch_wait(int *latch, long timeout_ms)
{
    return rx_platform_in_use->latch_wait(latch, timeout_ms);
}

/* For implementations whose sleep primitive waits while a word holds a value (futex,
 * WaitOnAddress): the latch word is 0 unset, 1 set, 2 unset with a waiter asleep, so setting a
 * latch nobody waits on costs no call. `sleep_while_marked` sleeps while *latch is 2, for at
 * most timeout_us (< 0: no limit); it returns -1 if a signal ended the sleep, else 0 (woken,
 * timed out, or the word was no longer 2). Returns as latch_wait. */
int rx_latch_wait_marked(int *latch, long timeout_ms,
                         int (*sleep_while_marked)(int *latch, int64_t timeout_us));

/* A stream socket that a child process does not inherit, or RX_SOCKET_BAD (errno / WSA error
 * set). The same on every implementation of one OS. */
rx_socket_t rx_socket_open(int family, int type, int protocol);
int rx_socket_close(rx_socket_t fd);
/* Whether a read on the connected socket fd would not block: bytes, the peer's close or an
 * error wait there. Reads nothing (a peek). */
int rx_socket_has_news(rx_socket_t fd);

#endif
