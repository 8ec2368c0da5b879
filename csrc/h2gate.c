/* The HTTP/2 gate (see h2gate.h for why it exists). */
#include "h2gate.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

struct rx_origin {
    rx_origin *next;
    rx_gate *gate;
    char *key;               /* "scheme://authority" of the URL */
    long users;              /* admitted transfers not yet forgotten */
    long connections;        /* sockets open to the origin */
    rx_transfer *opener;     /* setting up the first connection, or NULL */
    rx_transfer *members;    /* its admitted transfers, linked through member_next/prev */
    rx_transfer *parked_head, *parked_tail;
};

/* One request holding its connection's socket corked (bug 3 in h2gate.h). */
typedef struct {
    int fd;
    rx_transfer *t;          /* NULL once the transfer ended */
    unsigned reads_seen;     /* t->upload_reads when last looked at */
    int passes;              /* loop passes held so far */
} rx_hold;

struct rx_gate {
    rx_origin *origins;
    rx_origin **by_fd;       /* socket -> origin, for the close callback */
    size_t by_fd_len;
    rx_transfer *released_head, *released_tail;
    rx_hold held[RX_GATE_MAX_HELD]; /* corked sockets and the requests they hold (bug 3) */
    int held_len;
};

rx_gate *rx_gate_new(void) { return calloc(1, sizeof(rx_gate)); }

void rx_gate_free(rx_gate *g)
{
    if (g == NULL)
        return;
    while (g->origins != NULL) {
        rx_origin *o = g->origins;
        g->origins = o->next;
        free(o->key);
        free(o);
    }
    free(g->by_fd);
    free(g);
}

/* The origin part of a URL the Python layer built: scheme "://" authority. */
static size_t origin_length(const char *url)
{
    const char *p = strstr(url, "://");
    if (p == NULL)
        return strlen(url);
    p += 3;
    p += strcspn(p, "/?#");
    return (size_t)(p - url);
}

static rx_origin *origin_for(rx_gate *g, const char *url)
{
    size_t len = origin_length(url);
    for (rx_origin *o = g->origins; o != NULL; o = o->next)
        if (strlen(o->key) == len && memcmp(o->key, url, len) == 0)
            return o;
    rx_origin *o = calloc(1, sizeof *o);
    if (o == NULL || (o->key = malloc(len + 1)) == NULL) {
        free(o);
        return NULL;
    }
    memcpy(o->key, url, len);
    o->key[len] = '\0';
    o->gate = g;
    o->next = g->origins;
    g->origins = o;
    return o;
}

/* An origin nobody uses and with no connection left is dropped (a crawler meets many). */
static void maybe_drop(rx_gate *g, rx_origin *o)
{
    if (o->users > 0 || o->connections > 0)
        return;
    for (rx_origin **link = &g->origins; *link != NULL; link = &(*link)->next) {
        if (*link == o) {
            *link = o->next;
            free(o->key);
            free(o);
            return;
        }
    }
}

static void release_parked(rx_gate *g, rx_origin *o)
{
    if (o->parked_head == NULL)
        return;
    for (rx_transfer *t = o->parked_head; t != NULL; t = t->park_next)
        t->parked = 0;
    if (g->released_tail != NULL)
        g->released_tail->park_next = o->parked_head;
    else
        g->released_head = o->parked_head;
    g->released_tail = o->parked_tail;
    o->parked_head = o->parked_tail = NULL;
}

int rx_gate_admit(rx_gate *g, rx_transfer *t)
{
    rx_origin *o = t->origin;
    if (o == NULL) {
        if ((o = origin_for(g, t->url)) == NULL)
            return -1;
        o->users++;
        t->origin = o;
        t->member_prev = NULL;
        t->member_next = o->members;
        if (o->members != NULL)
            o->members->member_prev = t;
        o->members = t;
    }
    int bypass = t->gate_bypass;
    t->gate_bypass = 0;
    if (o->opener != NULL && o->opener != t && !bypass) {
        t->parked = 1;
        t->park_next = NULL;
        if (o->parked_tail != NULL)
            o->parked_tail->park_next = t;
        else
            o->parked_head = t;
        o->parked_tail = t;
        return 0;
    }
    long version = t->http_version == RX_HTTP_2_PRIOR_KNOWLEDGE
                       ? CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE
                       : CURL_HTTP_VERSION_2TLS;
    t->h2c_reuse_only = 0;
    /* Restarted because libcurl wanted a new connection: make sure it gets one (reusing with
     * prior knowledge would trigger bug 2; FRESH_CONNECT also closes an idle connection if
     * the per-host cap leaves no room). */
    curl_easy_setopt(t->easy, CURLOPT_FRESH_CONNECT, t->needs_new_connection ? 1L : 0L);
    if (t->needs_new_connection || (o->connections == 0 && !bypass)) {
        o->opener = t; /* it will open the connection the others wait for */
        t->needs_new_connection = 0;
    } else if (bypass && o->connections == 0) {
        /* Its opener failed to connect: try in parallel rather than one opener at a time
         * (eight requests to a server that never answered took eight connect timeouts).
         * Without PIPEWAIT, or libcurl would queue them behind each other's attempts. */
        curl_easy_setopt(t->easy, CURLOPT_PIPEWAIT, 0L);
    } else if (version == CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE) {
        version = CURL_HTTP_VERSION_2_0; /* reuses the connection: see bug 2 in h2gate.h */
        t->h2c_reuse_only = 1;
    }
    curl_easy_setopt(t->easy, CURLOPT_HTTP_VERSION, version);
    return 1;
}

int rx_gate_should_restart(rx_transfer *t)
{
    if (!t->needs_new_connection)
        return 0;
    /* libcurl also wants a new connection when it means to send a request again (a refused
     * stream, or one it took for lost). Not a request that went out and is not idempotent,
     * unless the server is known not to have processed it: it may have acted on it (bug 3). */
    if (t->requests_started > 0 && !rx_method_is_idempotent(t->method) &&
        !rx_transfer_unprocessed(t))
        return 0;
    /* Bounded: a server that refuses every new connection must not make us loop. */
    return ++t->gate_restarts <= 3;
}

rx_transfer *rx_gate_take_released(rx_gate *g)
{
    rx_transfer *head = g->released_head;
    g->released_head = g->released_tail = NULL;
    return head;
}

/* The opener's connection is ready (or it is gone): the parked transfers may go. */
static void opener_done(rx_gate *g, rx_origin *o, int failed)
{
    o->opener = NULL;
    /* Prior-knowledge transfers never bypass: a bypassing transfer asks for prior knowledge
     * (there is no connection to reuse), the per-host cap of one makes libcurl queue all but
     * one, and the queued ones are then handed the new connection: bug 2 (seen as a transfer
     * spinning at 100% CPU until its timeout). Parked instead, one becomes the next opener. */
    if (failed)
        for (rx_transfer *t = o->parked_head; t != NULL; t = t->park_next)
            t->gate_bypass = t->http_version != RX_HTTP_2_PRIOR_KNOWLEDGE;
    release_parked(g, o);
}

void rx_gate_opener_ready(rx_transfer *t)
{
    rx_origin *o = t->origin;
    if (o != NULL && o->opener == t)
        opener_done(o->gate, o, 0);
}

/* Take `t` out of a list linked through park_next, if it is there. */
static void unlink_transfer(rx_transfer **head, rx_transfer **tail, rx_transfer *t)
{
    rx_transfer *prev = NULL;
    for (rx_transfer *p = *head; p != NULL; prev = p, p = p->park_next) {
        if (p != t)
            continue;
        if (prev != NULL)
            prev->park_next = p->park_next;
        else
            *head = p->park_next;
        if (*tail == p)
            *tail = prev;
        return;
    }
}

void rx_gate_forget(rx_gate *g, rx_transfer *t)
{
    rx_origin *o = t->origin;
    if (o == NULL)
        return;
    if (t->parked)
        unlink_transfer(&o->parked_head, &o->parked_tail, t);
    else /* released but not yet admitted again, or (usually) in no list at all */
        unlink_transfer(&g->released_head, &g->released_tail, t);
    t->parked = 0;
    for (int i = 0; i < g->held_len; i++)
        if (g->held[i].t == t)
            g->held[i].t = NULL; /* its socket is uncorked when this loop pass ends */
    if (o->opener == t)
        opener_done(g, o, 1); /* ended before any response came: it could not connect */
    if (t->member_prev != NULL)
        t->member_prev->member_next = t->member_next;
    else
        o->members = t->member_next;
    if (t->member_next != NULL)
        t->member_next->member_prev = t->member_prev;
    t->member_prev = t->member_next = NULL;
    t->origin = NULL;
    o->users--;
    maybe_drop(g, o);
}

/* ---------------------------------------------------------------------------------------------
 * Socket accounting: libcurl lets us create and close its sockets.
 */

static int remember_fd(rx_gate *g, int fd, rx_origin *o)
{
    if ((size_t)fd >= g->by_fd_len) {
        size_t len = g->by_fd_len ? g->by_fd_len : 64;
        while (len <= (size_t)fd)
            len *= 2;
        rx_origin **grown = realloc(g->by_fd, len * sizeof *grown);
        if (grown == NULL)
            return -1;
        memset(grown + g->by_fd_len, 0, (len - g->by_fd_len) * sizeof *grown);
        g->by_fd = grown;
        g->by_fd_len = len;
    }
    g->by_fd[fd] = o;
    return 0;
}

curl_socket_t rx_gate_open_socket(void *clientp, curlsocktype purpose,
                                  struct curl_sockaddr *address)
{
    rx_transfer *t = clientp;
    (void)purpose;
    if (t->h2c_reuse_only) {
        /* libcurl wants a new connection for a transfer set up to reuse one: refuse, and let
         * the engine restart it as a prior-knowledge opener (bug 2 in h2gate.h). */
        t->needs_new_connection = 1;
        return CURL_SOCKET_BAD;
    }
    int fd = socket(address->family, address->socktype | SOCK_CLOEXEC, address->protocol);
    if (fd < 0)
        return CURL_SOCKET_BAD;
    rx_origin *o = t->origin;
    if (o != NULL) {
        if (remember_fd(o->gate, fd, o) != 0) {
            close(fd);
            return CURL_SOCKET_BAD;
        }
        o->connections++;
    }
    return fd;
}

int rx_gate_close_socket(void *clientp, curl_socket_t fd)
{
    rx_gate *g = clientp;
    for (int i = 0; i < g->held_len; i++)
        if (g->held[i].fd == fd)
            g->held[i--] = g->held[--g->held_len];
    if (fd >= 0 && (size_t)fd < g->by_fd_len && g->by_fd[fd] != NULL) {
        rx_origin *o = g->by_fd[fd];
        g->by_fd[fd] = NULL;
        o->connections--;
        maybe_drop(g, o);
    }
    return close(fd);
}

/* ---- bug 3: hold a request's first bytes until its body is with them ---------------------- */

static int local_port(int fd)
{
    struct sockaddr_storage addr;
    socklen_t len = sizeof addr;
    if (getsockname(fd, (struct sockaddr *)&addr, &len) != 0)
        return -1;
    if (addr.ss_family == AF_INET)
        return ntohs(((struct sockaddr_in *)&addr)->sin_port);
    if (addr.ss_family == AF_INET6)
        return ntohs(((struct sockaddr_in6 *)&addr)->sin6_port);
    return -1;
}

void rx_gate_hold_request(rx_transfer *t, int conn_local_port)
{
    rx_origin *o = t->origin;
    if (o == NULL || conn_local_port <= 0)
        return;
    rx_gate *g = o->gate;
    if (g->held_len == RX_GATE_MAX_HELD)
        return; /* not held: this request is exposed to the race again, nothing worse */
    for (size_t fd = 0; fd < g->by_fd_len; fd++) {
        if (g->by_fd[fd] != o || local_port((int)fd) != conn_local_port)
            continue;
        int on = 1;
        if (setsockopt((int)fd, IPPROTO_TCP, TCP_CORK, &on, sizeof on) == 0)
            g->held[g->held_len++] = (rx_hold){(int)fd, t, t->upload_reads, 0};
        return;
    }
}

/* Whether a hold lasts into the next loop pass: only for a body read by callback that is not
 * finished and made progress this pass (libcurl reads such a body once per pass, and the end
 * of an unknown-length one takes one more pass), for a few passes. The loop comes straight back
 * for it, as the socket is writable; a body that stalls (flow control) is let go at once,
 * and every hold before the loop sleeps, so a cork never waits for the kernel's 200 ms timer. */
static int hold_lasts(rx_hold *h)
{
    rx_transfer *t = h->t;
    if (t == NULL || t->upload_finished || ++h->passes >= RX_GATE_HOLD_PASSES)
        return 0;
    /* A read that found the fed buffer empty counts too: the feeder is usually a moment
     * behind, and its bytes arrive while the loop polls before it would sleep. */
    int progressed = t->upload_reads != h->reads_seen;
    h->reads_seen = t->upload_reads;
    return progressed;
}

void rx_gate_release_held(rx_gate *g, int everything)
{
    char lasts[RX_GATE_MAX_HELD];
    for (int i = 0; i < g->held_len; i++)
        lasts[i] = !everything && hold_lasts(&g->held[i]);
    for (int i = 0; i < g->held_len; i++) {
        int still_held = 0; /* a socket stays corked while any of its holds lasts */
        for (int k = 0; k < g->held_len && !lasts[i]; k++)
            still_held |= lasts[k] && g->held[k].fd == g->held[i].fd;
        int off = 0;
        if (!lasts[i] && !still_held) /* uncorking sends what was held */
            (void)setsockopt(g->held[i].fd, IPPROTO_TCP, TCP_CORK, &off, sizeof off);
    }
    int kept = 0;
    for (int i = 0; i < g->held_len; i++)
        if (lasts[i])
            g->held[kept++] = g->held[i];
    g->held_len = kept;
}

void rx_gate_note_goaway(rx_transfer *t, int port, long last_stream)
{
    rx_origin *o = t->origin;
    if (o == NULL || port <= 0 || last_stream < 0)
        return;
    for (rx_transfer *other = o->members; other != NULL; other = other->member_next)
        if (other != t && other->conn_port == port)
            other->goaway_last_stream = last_stream;
}
