/* LD_PRELOAD shim for tests/libcurl/test_reads_per_request.py: counts the process's recv()
 * calls, those that found nothing to read (EAGAIN), and those of them that came straight after a
 * send() on the same socket (no read in between: a read for an answer that cannot have come
 * yet), and writes the three to $RX_COUNT_READS_FILE at exit. libcurl (linked into the
 * extension) calls libc's send() and recv(), so the shim sees every request it sends and every
 * read it makes. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/types.h>

enum { TRACKED_FDS = 4096 };

static atomic_long reads, empty_reads, empty_after_send;
static atomic_char sent_last[TRACKED_FDS]; /* 1: the socket's last call was a send() */

ssize_t send(int fd, const void *buf, size_t len, int flags)
{
    static ssize_t (*real_send)(int, const void *, size_t, int);
    if (real_send == NULL)
        real_send = (ssize_t(*)(int, const void *, size_t, int))dlsym(RTLD_NEXT, "send");
    if (fd >= 0 && fd < TRACKED_FDS)
        atomic_store(&sent_last[fd], 1);
    return real_send(fd, buf, len, flags);
}

ssize_t recv(int fd, void *buf, size_t len, int flags)
{
    static ssize_t (*real_recv)(int, void *, size_t, int);
    if (real_recv == NULL)
        real_recv = (ssize_t(*)(int, void *, size_t, int))dlsym(RTLD_NEXT, "recv");
    ssize_t n = real_recv(fd, buf, len, flags);
    int saved = errno;
    int after_send = fd >= 0 && fd < TRACKED_FDS && atomic_exchange(&sent_last[fd], 0);
    atomic_fetch_add(&reads, 1);
    if (n < 0 && (saved == EAGAIN || saved == EWOULDBLOCK)) {
        atomic_fetch_add(&empty_reads, 1);
        if (after_send)
            atomic_fetch_add(&empty_after_send, 1);
    }
    errno = saved;
    return n;
}

__attribute__((destructor)) static void report(void)
{
    const char *path = getenv("RX_COUNT_READS_FILE");
    FILE *out = path ? fopen(path, "w") : NULL;
    if (out == NULL)
        return;
    fprintf(out, "%ld %ld %ld\n", atomic_load(&reads), atomic_load(&empty_reads),
            atomic_load(&empty_after_send));
    fclose(out);
}
