/* platform.h on Linux: epoll, eventfd and futex. Each wait touches only the sockets that fired
 * and each wake-up is one system call; nothing newer than Linux 2.6.27 and glibc 2.28 (the
 * manylinux_2_28 floor), and musl has all of it too. */
#ifdef __linux__

#include "platform.h"
#include "heap.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"

enum { EPOLL_BATCH = 64 };

struct rx_poller {
    int epoll_fd;
    struct epoll_event ready[EPOLL_BATCH];
};

static rx_poller *poller_new(void)
{
    rx_poller *p = rx_malloc(sizeof *p);
    if (p == NULL)
        return NULL;
    p->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
    if (p->epoll_fd < 0) {
        int saved = errno;
        rx_free(p);
        errno = saved;
        return NULL;
    }
    return p;
}

static void poller_free(rx_poller *p)
{
    if (p == NULL)
        return;
    close(p->epoll_fd);
    rx_free(p);
}

/* ADD or MOD, whichever the caller's belief says, then the other: a belief made stale by a
 * close we did not hear of costs one failed call, not a lost watch. */
static int poller_set(rx_poller *p, rx_socket_t fd, unsigned events, int watched)
{
    struct epoll_event ev = {0};
    ev.events = ((events & RX_POLL_IN) ? EPOLLIN : 0u) | ((events & RX_POLL_OUT) ? EPOLLOUT : 0u);
    ev.data.fd = fd;
    int op = watched ? EPOLL_CTL_MOD : EPOLL_CTL_ADD;
    if (epoll_ctl(p->epoll_fd, op, fd, &ev) == 0)
        return 0;
    op = op == EPOLL_CTL_ADD ? EPOLL_CTL_MOD : EPOLL_CTL_ADD;
    return epoll_ctl(p->epoll_fd, op, fd, &ev);
}

static void poller_remove(rx_poller *p, rx_socket_t fd)
{
    /* Fails only for a socket closed already, which epoll forgot by itself. */
    epoll_ctl(p->epoll_fd, EPOLL_CTL_DEL, fd, NULL);
}

static int poller_wait(rx_poller *p, rx_poll_event *out, int max, int timeout_ms)
{
    int n = epoll_wait(p->epoll_fd, p->ready, max < EPOLL_BATCH ? max : EPOLL_BATCH, timeout_ms);
    for (int i = 0; i < n; i++) {
        uint32_t ev = p->ready[i].events;
        out[i].fd = p->ready[i].data.fd;
        out[i].events = ((ev & EPOLLIN) ? RX_POLL_IN : 0u) | ((ev & EPOLLOUT) ? RX_POLL_OUT : 0u) |
                        ((ev & (EPOLLERR | EPOLLHUP)) ? RX_POLL_ERR : 0u);
    }
    return n;
}

/* One eventfd is both ends: a write adds to its counter, a read empties it. */
static int notifier_open(rx_notifier *n)
{
    n->read_end = n->write_end = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    return n->read_end < 0 ? -1 : 0;
}

static void notifier_close(rx_notifier *n)
{
    if (n->read_end >= 0)
        close(n->read_end);
    n->read_end = n->write_end = RX_SOCKET_BAD;
}

static void notifier_raise(rx_notifier *n)
{
    uint64_t one = 1;
    ssize_t written;
    do
        written = write(n->write_end, &one, sizeof one);
    while (written < 0 && errno == EINTR);
}

static void notifier_clear(rx_notifier *n)
{
    uint64_t count;
    if (read(n->read_end, &count, sizeof count) < 0) { /* EAGAIN: nothing raised */ }
}

/* The kernel's futex ABI (linux/futex.h, which musl toolchains may not ship). */
#ifndef FUTEX_WAIT_PRIVATE
#define FUTEX_WAIT_PRIVATE (0 | 128)
#define FUTEX_WAKE_PRIVATE (1 | 128)
#endif

/* The latch: the word itself is the futex (rx_latch_wait_marked has the protocol). */
static long futex(int *word, int op, int value, const struct timespec *timeout)
{
    return syscall(SYS_futex, word, op, value, timeout, NULL, 0);
}

static void latch_set(int *latch)
{
    if (__atomic_exchange_n(latch, 1, __ATOMIC_RELEASE) == 2)
        futex(latch, FUTEX_WAKE_PRIVATE, INT_MAX, NULL);
}

static int futex_sleep(int *latch, int64_t timeout_us)
{
    struct timespec left, *timeout = NULL; /* FUTEX_WAIT's timeout is relative, monotonic */
    if (timeout_us >= 0) {
        left.tv_sec = (time_t)(timeout_us / 1000000);
        left.tv_nsec = (long)(timeout_us % 1000000) * 1000;
        timeout = &left;
    }
    return futex(latch, FUTEX_WAIT_PRIVATE, 2, timeout) != 0 && errno == EINTR ? -1 : 0;
}

static int latch_wait(int *latch, long timeout_ms)
{
    return rx_latch_wait_marked(latch, timeout_ms, futex_sleep);
}

const rx_platform rx_platform_linux = RX_PLATFORM("linux");

#endif
