/* LD_PRELOAD shim for tests/test_reads_per_request.py: counts the process's recv() calls, and
 * those that found nothing to read (EAGAIN), and writes both to $RX_COUNT_READS_FILE at exit.
 * libcurl (linked into the extension) calls libc's recv(), so the shim sees every read it makes
 * on a socket. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/types.h>

static atomic_long reads, empty_reads;

ssize_t recv(int fd, void *buf, size_t len, int flags)
{
    static ssize_t (*real_recv)(int, void *, size_t, int);
    if (real_recv == NULL)
        real_recv = (ssize_t(*)(int, void *, size_t, int))dlsym(RTLD_NEXT, "recv");
    ssize_t n = real_recv(fd, buf, len, flags);
    int saved = errno;
    atomic_fetch_add(&reads, 1);
    if (n < 0 && (saved == EAGAIN || saved == EWOULDBLOCK))
        atomic_fetch_add(&empty_reads, 1);
    errno = saved;
    return n;
}

__attribute__((destructor)) static void report(void)
{
    const char *path = getenv("RX_COUNT_READS_FILE");
    FILE *out = path ? fopen(path, "w") : NULL;
    if (out == NULL)
        return;
    fprintf(out, "%ld %ld\n", atomic_load(&reads), atomic_load(&empty_reads));
    fclose(out);
}
