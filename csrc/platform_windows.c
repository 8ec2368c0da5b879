/* platform.h on Windows: select(), a loopback socket pair, WaitOnAddress.
 *
 * select() rather than WSAPoll: before Windows 10 2004, WSAPoll did not report a connection that
 * failed (it waited for the connect timeout instead), and libcurl avoids it there for the same
 * reason. Its cost is a walk of every watched socket per wait, as with poll() (platform_posix.c);
 * IOCP would be the measured optimisation.
 *
 * A notifier must be a socket: select() and asyncio's selector loop watch only sockets, and
 * Windows has no socketpair(), so it is a connected pair on 127.0.0.1 whose accepted end is
 * checked to be the one this process connected. */
#ifdef _WIN32

#include <winsock2.h>
#include <ws2tcpip.h>

#include "platform.h"
#include "heap.h"

#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "thread.h"

/* ---------------------------------------------------------------------------------------------
 * Sockets.
 */

static INIT_ONCE winsock_once = INIT_ONCE_STATIC_INIT;

static BOOL CALLBACK start_winsock(PINIT_ONCE once, PVOID arg, PVOID *context)
{
    WSADATA data;
    (void)once, (void)arg, (void)context;
    return WSAStartup(MAKEWORD(2, 2), &data) == 0; /* counted; libcurl starts it too */
}

static int winsock_ready(void)
{
    return InitOnceExecuteOnce(&winsock_once, start_winsock, NULL, NULL) ? 0 : -1;
}

rx_socket_t rx_socket_open(int family, int type, int protocol)
{
    if (winsock_ready() != 0)
        return RX_SOCKET_BAD;
    /* Overlapped, as socket() makes them; not inherited by child processes. */
    return WSASocketW(family, type, protocol, NULL, 0,
                      WSA_FLAG_OVERLAPPED | WSA_FLAG_NO_HANDLE_INHERIT);
}

int rx_socket_close(rx_socket_t fd) { return closesocket(fd); }

int rx_socket_has_news(rx_socket_t fd)
{
    char byte; /* libcurl's sockets are non-blocking: a peek with nothing there would block */
    int n = recv(fd, &byte, 1, MSG_PEEK);
    return n >= 0 || WSAGetLastError() != WSAEWOULDBLOCK;
}

/* ---------------------------------------------------------------------------------------------
 * Poller: the watched sockets in an array; each wait fills select()'s three sets from it. A
 * Windows fd_set is a count and an array of sockets, so the sets are allocated at the array's
 * size (FD_SETSIZE only sizes the declared type) and filled by hand.
 */

typedef struct socket_set {
    u_int count; /* fd_set's layout: fd_count, then fd_array */
    SOCKET sockets[1];
} socket_set;

typedef struct watched_socket {
    SOCKET fd;
    unsigned events;
} watched_socket;

struct rx_poller {
    watched_socket *watched;
    int count, cap;
    socket_set *sets[3]; /* readable, writable, failed: cap sockets each */
};

static rx_poller *poller_new(void)
{
    if (winsock_ready() != 0)
        return NULL;
    return rx_calloc(1, sizeof(rx_poller));
}

static void poller_free(rx_poller *p)
{
    if (p == NULL)
        return;
    for (int i = 0; i < 3; i++)
        rx_free(p->sets[i]);
    rx_free(p->watched);
    rx_free(p);
}

static int find(const rx_poller *p, SOCKET fd)
{
    for (int i = 0; i < p->count; i++)
        if (p->watched[i].fd == fd)
            return i;
    return -1;
}

static int grow(rx_poller *p)
{
    int cap = p->cap ? p->cap * 2 : 16;
    watched_socket *watched = rx_realloc(p->watched, (size_t)cap * sizeof *watched);
    if (watched == NULL)
        return -1;
    p->watched = watched;
    for (int i = 0; i < 3; i++) {
        socket_set *set = rx_realloc(p->sets[i], sizeof(socket_set) + (size_t)cap * sizeof(SOCKET));
        if (set == NULL)
            return -1; /* the grown ones stay grown; cap is unchanged */
        p->sets[i] = set;
    }
    p->cap = cap;
    return 0;
}

static int poller_set(rx_poller *p, rx_socket_t fd, unsigned events, int watched)
{
    (void)watched;
    int at = find(p, fd);
    if (at < 0) {
        if (p->count == p->cap && grow(p) != 0) {
            WSASetLastError(WSA_NOT_ENOUGH_MEMORY);
            return -1;
        }
        at = p->count++;
        p->watched[at].fd = fd;
    }
    p->watched[at].events = events;
    return 0;
}

static void poller_remove(rx_poller *p, rx_socket_t fd)
{
    int at = find(p, fd);
    if (at >= 0)
        p->watched[at] = p->watched[--p->count];
}

/* Add `events` for fd to the reported events (at most max entries in out). */
static int report(rx_poll_event *out, int n, int max, SOCKET fd, unsigned events)
{
    for (int i = 0; i < n; i++) {
        if (out[i].fd == fd) {
            out[i].events |= events;
            return n;
        }
    }
    if (n == max)
        return n; /* still ready at the next wait: select() is level-triggered */
    out[n].fd = fd;
    out[n].events = events;
    return n + 1;
}

static int poller_wait(rx_poller *p, rx_poll_event *out, int max, int timeout_ms)
{
    if (p->count == 0) { /* select() refuses three empty sets */
        if (timeout_ms != 0)
            Sleep(timeout_ms < 0 ? INFINITE : (DWORD)timeout_ms);
        return 0;
    }
    socket_set *readable = p->sets[0], *writable = p->sets[1], *failed = p->sets[2];
    readable->count = writable->count = failed->count = 0;
    for (int i = 0; i < p->count; i++) {
        SOCKET fd = p->watched[i].fd;
        if (p->watched[i].events & RX_POLL_IN)
            readable->sockets[readable->count++] = fd;
        if (p->watched[i].events & RX_POLL_OUT) {
            writable->sockets[writable->count++] = fd;
            failed->sockets[failed->count++] = fd; /* where a failed connect() is reported */
        }
    }
    struct timeval tv, *timeout = NULL;
    if (timeout_ms >= 0) {
        tv.tv_sec = timeout_ms / 1000;
        tv.tv_usec = (timeout_ms % 1000) * 1000;
        timeout = &tv;
    }
    int ready = select(0, (fd_set *)readable, (fd_set *)writable, (fd_set *)failed, timeout);
    if (ready <= 0)
        return ready < 0 ? -1 : 0;
    /* select() left only the ready sockets in each set. */
    int n = 0;
    static const unsigned kinds[3] = {RX_POLL_IN, RX_POLL_OUT, RX_POLL_ERR};
    for (int k = 0; k < 3; k++)
        for (u_int i = 0; i < p->sets[k]->count; i++)
            n = report(out, n, max, p->sets[k]->sockets[i], kinds[k]);
    return n;
}

/* ---------------------------------------------------------------------------------------------
 * Notifier: two connected loopback sockets. Raising sends a byte; clearing reads until empty.
 */

static int set_nonblocking(SOCKET fd)
{
    u_long on = 1;
    return ioctlsocket(fd, FIONBIO, &on) == 0 ? 0 : -1;
}

static int same_address(const struct sockaddr_in *a, const struct sockaddr_in *b)
{
    return a->sin_family == b->sin_family && a->sin_port == b->sin_port &&
           a->sin_addr.s_addr == b->sin_addr.s_addr;
}

static int notifier_open(rx_notifier *n)
{
    n->read_end = n->write_end = INVALID_SOCKET;
    SOCKET listener = rx_socket_open(AF_INET, SOCK_STREAM, IPPROTO_TCP);
    if (listener == INVALID_SOCKET)
        return -1;
    struct sockaddr_in at, connected_from, accepted_from;
    int len = sizeof at;
    memset(&at, 0, sizeof at);
    at.sin_family = AF_INET;
    at.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    at.sin_port = 0;
    SOCKET writer = INVALID_SOCKET, reader = INVALID_SOCKET;
    if (bind(listener, (struct sockaddr *)&at, sizeof at) != 0 ||
        getsockname(listener, (struct sockaddr *)&at, &len) != 0 || listen(listener, 1) != 0)
        goto fail;
    writer = rx_socket_open(AF_INET, SOCK_STREAM, IPPROTO_TCP);
    if (writer == INVALID_SOCKET || connect(writer, (struct sockaddr *)&at, sizeof at) != 0)
        goto fail;
    len = sizeof connected_from;
    if (getsockname(writer, (struct sockaddr *)&connected_from, &len) != 0)
        goto fail;
    len = sizeof accepted_from;
    reader = accept(listener, (struct sockaddr *)&accepted_from, &len);
    /* Another local process could have connected first: the end must be our own. */
    if (reader == INVALID_SOCKET || !same_address(&connected_from, &accepted_from))
        goto fail;
    BOOL no_delay = TRUE; /* a raise is one byte that must not wait for an acknowledgement */
    const char *option = (const char *)&no_delay;
    if (setsockopt(writer, IPPROTO_TCP, TCP_NODELAY, option, sizeof no_delay) != 0 ||
        set_nonblocking(reader) != 0 || set_nonblocking(writer) != 0)
        goto fail;
    SetHandleInformation((HANDLE)reader, HANDLE_FLAG_INHERIT, 0);
    closesocket(listener);
    n->read_end = reader;
    n->write_end = writer;
    return 0;

fail:
    if (reader != INVALID_SOCKET)
        closesocket(reader);
    if (writer != INVALID_SOCKET)
        closesocket(writer);
    closesocket(listener);
    return -1;
}

static void notifier_close(rx_notifier *n)
{
    if (n->read_end != INVALID_SOCKET)
        closesocket(n->read_end);
    if (n->write_end != INVALID_SOCKET)
        closesocket(n->write_end);
    n->read_end = n->write_end = INVALID_SOCKET;
}

static void notifier_raise(rx_notifier *n)
{
    char one = 1;
    send(n->write_end, &one, 1, 0); /* WSAEWOULDBLOCK: full, so readable already */
}

static void notifier_clear(rx_notifier *n)
{
    char drain[64];
    while (recv(n->read_end, drain, sizeof drain, 0) == (int)sizeof drain) {
    }
}

/* ---------------------------------------------------------------------------------------------
 * Latch: WaitOnAddress (Windows 8 and later) on the word, with rx_latch_wait_marked's protocol.
 */

static void latch_set(int *latch)
{
    if (__atomic_exchange_n(latch, 1, __ATOMIC_RELEASE) == 2)
        WakeByAddressAll(latch);
}

static int address_sleep(int *latch, int64_t timeout_us)
{
    int asleep = 2;
    DWORD wait_ms = timeout_us < 0 ? INFINITE : (DWORD)((timeout_us + 999) / 1000);
    WaitOnAddress(latch, &asleep, sizeof asleep, wait_ms);
    return 0; /* no signal interrupts it */
}

static int latch_wait(int *latch, long timeout_ms)
{
    return rx_latch_wait_marked(latch, timeout_ms, address_sleep);
}

const rx_platform rx_platform_windows = RX_PLATFORM("windows");

#endif
