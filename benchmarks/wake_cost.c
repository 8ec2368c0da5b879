/* What waiting for an answer costs on this machine, with no HTTP client in the way.
 *
 * One keep-alive connection to a local server, sequential `GET <path>` requests, each answer
 * read with one recv (the answer must fit in 64 KiB and come in one piece, as nginx's small
 * answers do). The wait between send and answer is done one of three ways:
 *
 *   sleep   epoll_wait with no timeout: the thread sleeps until the answer wakes it
 *   spin    epoll_wait(0) in a loop, sched_yield between looks (what requestx's blocking
 *           callers do while the answer is expected soon, csrc/spin.h)
 *   nap N   epoll_pwait2 with an N microsecond timeout first, then the spin
 *
 * and the process's CPU time per request (user + system, getrusage) is printed beside the
 * rate. Run by benchmarks/wake_cost.py, which starts nginx and compiles this; by hand:
 *
 *     cc -O2 -o wake_cost benchmarks/wake_cost.c
 *     ./wake_cost PORT PATH sleep|spin|nap:N REQUESTS
 *
 * Linux only (epoll_pwait2: Linux 5.11, glibc 2.35).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum { WARMUP = 2000 };

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static double cpu_us(void)
{
    struct rusage r;
    getrusage(RUSAGE_SELF, &r);
    return (r.ru_utime.tv_sec + r.ru_stime.tv_sec) * 1e6 + r.ru_utime.tv_usec +
           r.ru_stime.tv_usec;
}

static int spin_until_ready(int ep, struct epoll_event *events)
{
    int n;
    while ((n = epoll_wait(ep, events, 4, 0)) == 0)
        sched_yield();
    return n;
}

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: %s PORT PATH sleep|spin|nap:MICROSECONDS REQUESTS\n", argv[0]);
        return 2;
    }
    int port = atoi(argv[1]);
    const char *mode = argv[3];
    long requests = atol(argv[4]);
    long nap_us = strncmp(mode, "nap:", 4) == 0 ? atol(mode + 4) : -1;
    int spin = strcmp(mode, "spin") == 0;
    if (!spin && nap_us < 0 && strcmp(mode, "sleep") != 0) {
        fprintf(stderr, "unknown mode %s\n", mode);
        return 2;
    }

    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in address = {0};
    address.sin_family = AF_INET;
    address.sin_port = htons((unsigned short)port);
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || connect(fd, (struct sockaddr *)&address, sizeof address) != 0) {
        perror("connect");
        return 1;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    int ep = epoll_create1(0);
    struct epoll_event watch = {.events = EPOLLIN, .data.fd = fd};
    epoll_ctl(ep, EPOLL_CTL_ADD, fd, &watch);

    char request[512];
    int length = snprintf(request, sizeof request,
                          "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", argv[2]);
    static char answer[65536];
    double started = 0, cpu_started = 0;
    long woken_in_nap = 0;
    for (long i = 0; i < requests + WARMUP; i++) {
        if (i == WARMUP) {
            started = now_us();
            cpu_started = cpu_us();
        }
        if (send(fd, request, (size_t)length, MSG_NOSIGNAL) != length) {
            perror("send");
            return 1;
        }
        struct epoll_event events[4];
        int n;
        if (spin) {
            n = spin_until_ready(ep, events);
        } else if (nap_us >= 0) {
            struct timespec nap = {nap_us / 1000000, (nap_us % 1000000) * 1000};
            n = epoll_pwait2(ep, events, 4, &nap, NULL);
            if (n > 0 && i >= WARMUP)
                woken_in_nap++;
            if (n == 0)
                n = spin_until_ready(ep, events);
        } else {
            n = epoll_wait(ep, events, 4, -1);
        }
        if (n < 0 || recv(fd, answer, sizeof answer, 0) <= 0) {
            perror("wait or recv");
            return 1;
        }
    }
    double wall = now_us() - started, cpu = cpu_us() - cpu_started;
    printf("{\"mode\": \"%s\", \"requests_per_second\": %.0f, \"cpu_us_per_request\": %.1f, "
           "\"answered_during_nap\": %.3f}\n",
           mode, requests / wall * 1e6, cpu / requests, (double)woken_in_nap / requests);
    close(fd);
    return 0;
}
