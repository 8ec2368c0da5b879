/* platform.h in portable POSIX.1-2008: poll(), a pipe, and condition variables on the monotonic
 * clock. For macOS and the BSDs, and built on Linux too, where REQUESTX_PLATFORM=posix runs the
 * whole suite on it. Correct first: a wait costs a walk of every watched socket, which is
 * nothing at tens of connections and what kqueue would later save at thousands.
 *
 * No GNU extension, no Linux header: scripts/check_portable.sh compiles this file with
 * -std=c11 -D_POSIX_C_SOURCE=200809L and warnings as errors. rx_socket_open/close, which
 * every POSIX build shares, are here too. */
#ifndef _WIN32

#include "platform.h"
#include "heap.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include "buffer.h"
#include "clock.h"
#include "thread.h"

/* ---------------------------------------------------------------------------------------------
 * Sockets (every POSIX build, whichever implementation runs).
 */

static int set_flags(int fd, int nonblocking)
{
    int fd_flags = fcntl(fd, F_GETFD);
    if (fd_flags < 0 || fcntl(fd, F_SETFD, fd_flags | FD_CLOEXEC) != 0)
        return -1;
    if (!nonblocking)
        return 0;
    int fl_flags = fcntl(fd, F_GETFL);
    return fl_flags < 0 || fcntl(fd, F_SETFL, fl_flags | O_NONBLOCK) != 0 ? -1 : 0;
}

rx_socket_t rx_socket_open(int family, int type, int protocol)
{
#ifdef SOCK_CLOEXEC
    /* Atomic where the system has it (Linux, the BSDs): a fork between socket() and fcntl()
     * on another thread would leak the descriptor into the child. */
    return socket(family, type | SOCK_CLOEXEC, protocol);
#else
    int fd = socket(family, type, protocol); /* macOS */
    if (fd >= 0 && set_flags(fd, 0) != 0) {
        int saved = errno;
        close(fd);
        errno = saved;
        return RX_SOCKET_BAD;
    }
    return fd;
#endif
}

int rx_socket_close(rx_socket_t fd) { return close(fd); }

int rx_socket_has_news(rx_socket_t fd)
{
    char byte;
    ssize_t n = recv(fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
    return n >= 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
}

/* ---------------------------------------------------------------------------------------------
 * Poller: an array of pollfd, and where each descriptor sits in it.
 */

struct rx_poller {
    struct pollfd *fds;
    size_t count, cap;
    size_t *slot_of; /* indexed by descriptor: its place in fds, plus one; 0 = not watched */
    size_t slot_len;
    size_t first; /* where the next wait starts reporting: every ready socket gets its turn */
};

static rx_poller *poller_new(void) { return rx_calloc(1, sizeof(rx_poller)); }

static void poller_free(rx_poller *p)
{
    if (p == NULL)
        return;
    rx_free(p->fds);
    rx_free(p->slot_of);
    rx_free(p);
}

static short poll_events(unsigned events)
{
    return (short)(((events & RX_POLL_IN) ? POLLIN : 0) | ((events & RX_POLL_OUT) ? POLLOUT : 0));
}

static int poller_set(rx_poller *p, rx_socket_t fd, unsigned events, int watched)
{
    if (fd < 0) {
        errno = EBADF;
        return -1;
    }
    size_t *slot_of = rx_table_grow(p->slot_of, &p->slot_len, sizeof *slot_of, (size_t)fd);
    if (slot_of == NULL)
        return -1;
    p->slot_of = slot_of;
    size_t slot = slot_of[fd];
    if (slot == 0) {
        if (p->count == p->cap) {
            size_t cap = p->cap ? p->cap * 2 : 16;
            struct pollfd *fds = rx_realloc(p->fds, cap * sizeof *fds);
            if (fds == NULL)
                return -1;
            p->fds = fds;
            p->cap = cap;
        }
        slot = ++p->count;
        slot_of[fd] = slot;
        p->fds[slot - 1].fd = fd;
    }
    p->fds[slot - 1].events = poll_events(events);
    p->fds[slot - 1].revents = 0;
    return 0;
}

static void poller_remove(rx_poller *p, rx_socket_t fd)
{
    if (fd < 0 || (size_t)fd >= p->slot_len || p->slot_of[fd] == 0)
        return;
    /* The last entry moves into the hole. */
    size_t hole = p->slot_of[fd] - 1, last = p->count - 1;
    if (hole != last) {
        p->fds[hole] = p->fds[last];
        p->slot_of[p->fds[hole].fd] = hole + 1;
    }
    p->slot_of[fd] = 0;
    p->count--;
}

static int poller_wait(rx_poller *p, rx_poll_event *out, int max, int timeout_ms)
{
    int ready = poll(p->fds, (nfds_t)p->count, timeout_ms);
    if (ready <= 0)
        return ready; /* -1: EINTR (or EINVAL past RLIMIT_NOFILE descriptors) */
    int n = 0;
    rx_socket_t closed[16];
    size_t n_closed = 0;
    size_t count = p->count, start = p->first < count ? p->first : 0;
    for (size_t k = 0; k < count && n < max && ready > 0; k++) {
        struct pollfd *entry = &p->fds[(start + k) % count];
        short got = entry->revents;
        if (got == 0)
            continue;
        ready--;
        if (got & POLLNVAL) {
            /* Closed while watched (libcurl says CURL_POLL_REMOVE first, so this is not
             * expected): forget it, or every wait would return at once for it. */
            if (n_closed < sizeof closed / sizeof *closed)
                closed[n_closed++] = entry->fd;
            continue;
        }
        out[n].fd = entry->fd;
        out[n].events = ((got & POLLIN) ? RX_POLL_IN : 0u) | ((got & POLLOUT) ? RX_POLL_OUT : 0u) |
                        ((got & (POLLERR | POLLHUP)) ? RX_POLL_ERR : 0u);
        n++;
        p->first = (start + k + 1) % count;
    }
    for (size_t i = 0; i < n_closed; i++)
        poller_remove(p, closed[i]);
    return n;
}

/* ---------------------------------------------------------------------------------------------
 * Notifier: a pipe. Raising writes a byte; clearing reads until it is empty. A full pipe is
 * readable already, so a raise that finds it full has nothing to add.
 */

static int notifier_open(rx_notifier *n)
{
    int ends[2];
    if (pipe(ends) != 0)
        return -1;
    if (set_flags(ends[0], 1) != 0 || set_flags(ends[1], 1) != 0) {
        int saved = errno;
        close(ends[0]);
        close(ends[1]);
        errno = saved;
        return -1;
    }
    n->read_end = ends[0];
    n->write_end = ends[1];
    return 0;
}

static void notifier_close(rx_notifier *n)
{
    if (n->read_end >= 0)
        close(n->read_end);
    if (n->write_end >= 0)
        close(n->write_end);
    n->read_end = n->write_end = RX_SOCKET_BAD;
}

static void notifier_raise(rx_notifier *n)
{
    char one = 1;
    ssize_t written;
    do
        written = write(n->write_end, &one, 1);
    while (written < 0 && errno == EINTR);
}

static void notifier_clear(rx_notifier *n)
{
    char drain[64];
    ssize_t got;
    do
        got = read(n->read_end, drain, sizeof drain);
    while (got == (ssize_t)sizeof drain || (got < 0 && errno == EINTR));
}

/* ---------------------------------------------------------------------------------------------
 * Latch: the word, and a condition variable shared by every latch whose address hashes to it
 * (a latch costs one int, however many transfers there are). A waiter marks the word 2 under
 * its bucket's mutex; setting it takes the mutex and wakes the bucket only when it finds 2.
 * Waiters of other latches in the bucket wake too, see their own word unset and sleep again.
 */

enum { LATCH_BUCKETS = 64 };

static struct latch_bucket {
    rx_mutex lock;
    rx_cond cond;
} buckets[LATCH_BUCKETS];

static pthread_once_t buckets_once = PTHREAD_ONCE_INIT;

static void init_buckets(void)
{
    for (int i = 0; i < LATCH_BUCKETS; i++) {
        rx_mutex_init(&buckets[i].lock);
        rx_cond_init(&buckets[i].cond);
    }
}

static struct latch_bucket *bucket_of(const int *latch)
{
    pthread_once(&buckets_once, init_buckets);
    uintptr_t at = (uintptr_t)latch;
    return &buckets[(at >> 4 ^ at >> 10) % LATCH_BUCKETS];
}

static void latch_set(int *latch)
{
    if (__atomic_exchange_n(latch, 1, __ATOMIC_RELEASE) != 2)
        return;
    struct latch_bucket *b = bucket_of(latch);
    rx_mutex_lock(&b->lock); /* the waiter that marked it is inside its wait, or about to be */
    rx_cond_broadcast(&b->cond);
    rx_mutex_unlock(&b->lock);
}

static int latch_wait(int *latch, long timeout_ms)
{
    if (rx_latch_is_set(latch))
        return 0;
    int64_t deadline_us = rx_clock_deadline_us(timeout_ms);
    struct latch_bucket *b = bucket_of(latch);
    int timed_out = 0;
    rx_mutex_lock(&b->lock);
    for (;;) {
        int seen = 0;
        if (__atomic_load_n(latch, __ATOMIC_ACQUIRE) == 1 ||
            (!__atomic_compare_exchange_n(latch, &seen, 2, 0, __ATOMIC_ACQUIRE, __ATOMIC_ACQUIRE) &&
             seen == 1))
            break;
        if (timed_out)
            break;
        timed_out = rx_cond_wait_until(&b->cond, &b->lock, deadline_us);
    }
    rx_mutex_unlock(&b->lock);
    return rx_latch_is_set(latch) ? 0 : -1;
}

const rx_platform rx_platform_posix = RX_PLATFORM("posix");

#endif
