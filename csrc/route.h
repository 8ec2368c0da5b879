/* Routes: how a transfer's connection is made, when it is not "a TCP connection straight to the
 * URL's host" — through a proxy (http://, https://, socks5://, socks5h://), over a Unix socket,
 * from a given local address, with socket options. One immutable, reference-counted object per
 * transport configuration, shared by its transfers like rx_tls (see tls.h).
 *
 * Built once in Python (`_routing.py`, engine_route(), decides what httpx's `proxy=`, `uds=`,
 * `local_address=` and `socket_options=` mean), applied to each easy handle by the loop thread.
 * libcurl keys pooled connections on the proxy, its credentials and TLS settings, the Unix
 * socket path and the local interface, so connections of different routes are never mixed;
 * `key` does the same for the engine's own HTTP/2 origin bookkeeping (origin.c). Socket options
 * are the exception: libcurl does not compare them, so a route with socket options must not
 * share an engine with other routes (the Python layer gives such a transport its own engine:
 * `_transports.py`). */
#ifndef RX_ROUTE_H
#define RX_ROUTE_H

#include <stddef.h>

#include <curl/curl.h>

#include "tls.h"

typedef struct rx_sockopt {
    int level;
    int name;
    size_t len;
    char value[]; /* what setsockopt() is given: an int, or the caller's bytes */
} rx_sockopt;

typedef struct rx_route {
    int refs;                  /* atomic */
    char *key;                 /* distinguishes routes in origin.c; never NULL */
    char *proxy_url;           /* CURLOPT_PROXY, scheme included (it picks the proxy type) */
    char *proxy_username;      /* SOCKS5 credentials (an HTTP proxy's go in proxy_headers) */
    char *proxy_password;
    struct curl_slist *proxy_headers; /* to the proxy only: CONNECT, or a forwarded request */
    rx_tls *proxy_tls;         /* TLS to an https:// proxy; NULL: verify with default CAs */
    char *unix_socket;         /* CURLOPT_UNIX_SOCKET_PATH */
    char *local_interface;     /* CURLOPT_INTERFACE ("host!ADDRESS"); not `interface`, which
                                * Windows headers define as a macro */
    long ip_resolve;           /* CURLOPT_IPRESOLVE; 0: whatever the name resolves to */
    rx_sockopt **sockopts;     /* applied to every socket the route opens */
    size_t sockopt_count;
} rx_route;

/* A new route with `key`; NULL: no memory. */
rx_route *rx_route_new(const char *key, size_t key_len);
void rx_route_ref(rx_route *route);
void rx_route_unref(rx_route *route);

/* Setters (before the object is shared): 0, or -1 for no memory (or a NUL in a string). */
int rx_route_add_proxy_header(rx_route *route, const char *line, size_t len);
int rx_route_add_sockopt(rx_route *route, int level, int name, const void *value, size_t len);
void rx_route_set_proxy_tls(rx_route *route, rx_tls *tls);

/* Loop thread: configure a fresh or reset easy handle. 0, or a CURLcode. */
int rx_route_apply(const rx_route *route, CURL *easy);

/* From the socket-options callback: apply the route's options to a new socket. 0, or -1 with
 * errno set by the setsockopt() that failed. */
int rx_route_apply_sockopts(const rx_route *route, curl_socket_t fd);

#endif
