/* TLS settings shared by a client's transfers (see tls.h). */
#include "tls.h"
#include "heap.h"

#include <stdlib.h>
#include <string.h>

rx_tls *rx_tls_new(void)
{
    rx_tls *tls = rx_calloc(1, sizeof *tls);
    if (tls == NULL)
        return NULL;
    tls->refs = 1;
    tls->verify_peer = tls->verify_host = 1;
    return tls;
}

void rx_tls_ref(rx_tls *tls) { __atomic_add_fetch(&tls->refs, 1, __ATOMIC_RELAXED); }

void rx_tls_unref(rx_tls *tls)
{
    if (tls == NULL || __atomic_sub_fetch(&tls->refs, 1, __ATOMIC_ACQ_REL) != 0)
        return;
    rx_free(tls->ca_file);
    rx_free(tls->ca_path);
    rx_free(tls->ca_pem);
    rx_free(tls->cert_file);
    rx_free(tls->key_file);
    rx_free_secret(tls->key_password);
    rx_free(tls);
}

void rx_wipe_secret(char *secret)
{
    /* volatile: the compiler may not drop stores to memory about to be freed. */
    for (volatile char *p = secret; *p; p++)
        *p = 0;
}

void rx_free_secret(char *secret)
{
    if (secret == NULL)
        return;
    rx_wipe_secret(secret); /* no passphrases or credentials left in freed memory */
    rx_free(secret);
}

int rx_tls_set_string(char **field, const char *value, size_t len)
{
    if (memchr(value, '\0', len) != NULL)
        return -1; /* libcurl takes C strings: a NUL would silently cut the value short */
    char *copy = rx_malloc(len + 1);
    if (copy == NULL)
        return -1;
    memcpy(copy, value, len);
    copy[len] = '\0';
    rx_free(*field);
    *field = copy;
    return 0;
}

int rx_tls_set_ca_pem(rx_tls *tls, const char *pem, size_t len)
{
    char *copy = rx_malloc(len ? len : 1);
    if (copy == NULL)
        return -1;
    memcpy(copy, pem, len);
    rx_free(tls->ca_pem);
    tls->ca_pem = copy;
    tls->ca_pem_len = len;
    return 0;
}

#define APPLY(opt, val)                                                                            \
    do {                                                                                           \
        CURLcode rc_ = curl_easy_setopt(easy, opt, val);                                           \
        if (rc_ != CURLE_OK)                                                                       \
            return (int)rc_;                                                                       \
    } while (0)

/* The same settings name different options for the origin and for an https:// proxy. */
typedef struct {
    CURLoption verify_peer, verify_host, ca_file, ca_path, ca_blob, cert, cert_type, key,
        key_password, ssl_version;
} tls_options;

static const tls_options ORIGIN_OPTIONS = {
    CURLOPT_SSL_VERIFYPEER, CURLOPT_SSL_VERIFYHOST, CURLOPT_CAINFO, CURLOPT_CAPATH,
    CURLOPT_CAINFO_BLOB,    CURLOPT_SSLCERT,        CURLOPT_SSLCERTTYPE, CURLOPT_SSLKEY,
    CURLOPT_KEYPASSWD,      CURLOPT_SSLVERSION,
};

static const tls_options PROXY_OPTIONS = {
    CURLOPT_PROXY_SSL_VERIFYPEER, CURLOPT_PROXY_SSL_VERIFYHOST, CURLOPT_PROXY_CAINFO,
    CURLOPT_PROXY_CAPATH,         CURLOPT_PROXY_CAINFO_BLOB,    CURLOPT_PROXY_SSLCERT,
    CURLOPT_PROXY_SSLCERTTYPE,    CURLOPT_PROXY_SSLKEY,         CURLOPT_PROXY_KEYPASSWD,
    CURLOPT_PROXY_SSLVERSION,
};

static int apply(const rx_tls *tls, CURL *easy, const tls_options *o)
{
    /* The handle was reset: it verifies peer and host already. Only turning off is work. */
    if (!tls->verify_peer)
        APPLY(o->verify_peer, 0L);
    if (!tls->verify_host)
        APPLY(o->verify_host, 0L);
    /* CAs given explicitly replace libcurl's default store rather than add to it: trusting
     * "this CA" must not mean "this CA and every system one". */
    if (tls->ca_pem != NULL || tls->ca_file != NULL || tls->ca_path != NULL) {
        APPLY(o->ca_file, tls->ca_file);
        APPLY(o->ca_path, tls->ca_path);
    }
    if (tls->ca_pem != NULL) {
        /* NOCOPY: the settings outlive every transfer using them (each holds a reference). */
        struct curl_blob blob = {tls->ca_pem, tls->ca_pem_len, CURL_BLOB_NOCOPY};
        APPLY(o->ca_blob, &blob);
    }
    if (tls->cert_file != NULL) {
        APPLY(o->cert, tls->cert_file);
        APPLY(o->cert_type, "PEM");
    }
    if (tls->key_file != NULL)
        APPLY(o->key, tls->key_file);
    if (tls->key_password != NULL)
        APPLY(o->key_password, tls->key_password);
    if (tls->ssl_version != 0)
        APPLY(o->ssl_version, tls->ssl_version);
    return 0;
}

int rx_tls_apply(const rx_tls *tls, CURL *easy) { return apply(tls, easy, &ORIGIN_OPTIONS); }

int rx_tls_apply_to_proxy(const rx_tls *tls, CURL *easy)
{
    return apply(tls, easy, &PROXY_OPTIONS);
}

#undef APPLY
