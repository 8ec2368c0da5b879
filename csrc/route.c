/* Routes: proxies, Unix sockets, local addresses, socket options (see route.h). */
#include "route.h"
#include "heap.h"

#include <stdlib.h>
#include <string.h>
#ifdef _WIN32
#include <winsock2.h>
#else
#include <sys/socket.h>
#endif

rx_route *rx_route_new(const char *key, size_t key_len)
{
    rx_route *route = rx_calloc(1, sizeof *route);
    if (route == NULL)
        return NULL;
    /* The strings are copied as rx_tls's are: a NUL inside is refused. */
    if (rx_tls_set_string(&route->key, key, key_len) != 0) {
        rx_free(route);
        return NULL;
    }
    route->refs = 1;
    return route;
}

void rx_route_ref(rx_route *route) { __atomic_add_fetch(&route->refs, 1, __ATOMIC_RELAXED); }

void rx_route_unref(rx_route *route)
{
    if (route == NULL || __atomic_sub_fetch(&route->refs, 1, __ATOMIC_ACQ_REL) != 0)
        return;
    rx_free(route->key);
    rx_free(route->proxy_url);
    rx_free_secret(route->proxy_username);
    rx_free_secret(route->proxy_password);
    /* Proxy headers carry Proxy-Authorization: wipe them too. */
    for (struct curl_slist *item = route->proxy_headers; item != NULL; item = item->next)
        rx_wipe_secret(item->data);
    curl_slist_free_all(route->proxy_headers);
    rx_tls_unref(route->proxy_tls);
    rx_free(route->unix_socket);
    rx_free(route->local_interface);
    for (size_t i = 0; i < route->sockopt_count; i++)
        rx_free(route->sockopts[i]);
    rx_free(route->sockopts);
    rx_free(route);
}

int rx_route_add_proxy_header(rx_route *route, const char *line, size_t len)
{
    char *copy = NULL;
    if (rx_tls_set_string(&copy, line, len) != 0)
        return -1;
    struct curl_slist *next = curl_slist_append(route->proxy_headers, copy);
    rx_free_secret(copy); /* curl_slist_append copied it */
    if (next == NULL)
        return -1;
    route->proxy_headers = next;
    return 0;
}

int rx_route_add_sockopt(rx_route *route, int level, int name, const void *value, size_t len)
{
    rx_sockopt **grown = rx_realloc(route->sockopts, (route->sockopt_count + 1) * sizeof *grown);
    if (grown == NULL)
        return -1;
    route->sockopts = grown;
    rx_sockopt *opt = rx_malloc(sizeof *opt + (len ? len : 1));
    if (opt == NULL)
        return -1;
    opt->level = level;
    opt->name = name;
    opt->len = len;
    memcpy(opt->value, value, len);
    route->sockopts[route->sockopt_count++] = opt;
    return 0;
}

void rx_route_set_proxy_tls(rx_route *route, rx_tls *tls)
{
    rx_tls_ref(tls);
    rx_tls_unref(route->proxy_tls);
    route->proxy_tls = tls;
}

#define APPLY(opt, val)                                                                            \
    do {                                                                                           \
        CURLcode rc_ = curl_easy_setopt(easy, opt, val);                                           \
        if (rc_ != CURLE_OK)                                                                       \
            return (int)rc_;                                                                       \
    } while (0)

int rx_route_apply(const rx_route *route, CURL *easy)
{
    if (route->proxy_url != NULL) {
        APPLY(CURLOPT_PROXY, route->proxy_url); /* for every URL: CURLOPT_NOPROXY is "" */
        /* The CONNECT answer ("200 Connection established") is not the response. */
        APPLY(CURLOPT_SUPPRESS_CONNECT_HEADERS, 1L);
        if (route->proxy_username != NULL) {
            APPLY(CURLOPT_PROXYUSERNAME, route->proxy_username);
            APPLY(CURLOPT_PROXYPASSWORD, route->proxy_password ? route->proxy_password : "");
        }
        if (route->proxy_headers != NULL) {
            /* SEPARATE (libcurl's default, set anyway): these go to the proxy only — on the
             * CONNECT of a tunnel, beside the request when the proxy forwards it — and the
             * request's own headers never go on a CONNECT. */
            APPLY(CURLOPT_HEADEROPT, (long)CURLHEADER_SEPARATE);
            APPLY(CURLOPT_PROXYHEADER, route->proxy_headers);
        }
        if (route->proxy_tls != NULL) {
            int rc = rx_tls_apply_to_proxy(route->proxy_tls, easy);
            if (rc != 0)
                return rc;
        }
    }
    if (route->unix_socket != NULL)
        APPLY(CURLOPT_UNIX_SOCKET_PATH, route->unix_socket);
    if (route->local_interface != NULL)
        APPLY(CURLOPT_INTERFACE, route->local_interface);
    if (route->ip_resolve != 0)
        APPLY(CURLOPT_IPRESOLVE, route->ip_resolve);
    return 0;
}

#undef APPLY

int rx_route_apply_sockopts(const rx_route *route, curl_socket_t fd)
{
    for (size_t i = 0; i < route->sockopt_count; i++) {
        const rx_sockopt *opt = route->sockopts[i];
#ifdef _WIN32
        int rc = setsockopt(fd, opt->level, opt->name, (const char *)opt->value, (int)opt->len);
#else
        int rc = setsockopt(fd, opt->level, opt->name, opt->value, (socklen_t)opt->len);
#endif
        if (rc != 0)
            return -1;
    }
    return 0;
}
