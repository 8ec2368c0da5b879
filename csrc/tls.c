/* TLS settings shared by a client's transfers (see tls.h). */
#include "tls.h"

#include <stdlib.h>
#include <string.h>

rx_tls *rx_tls_new(void)
{
    rx_tls *tls = calloc(1, sizeof *tls);
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
    free(tls->ca_file);
    free(tls->ca_path);
    free(tls->ca_pem);
    free(tls->cert_file);
    free(tls->key_file);
    if (tls->key_password != NULL) {
        /* Do not leave the passphrase in freed memory. */
        volatile char *p = tls->key_password;
        while (*p)
            *p++ = 0;
        free(tls->key_password);
    }
    free(tls);
}

int rx_tls_set_string(char **field, const char *value, size_t len)
{
    if (memchr(value, '\0', len) != NULL)
        return -1; /* libcurl takes C strings: a NUL would silently cut the value short */
    char *copy = malloc(len + 1);
    if (copy == NULL)
        return -1;
    memcpy(copy, value, len);
    copy[len] = '\0';
    free(*field);
    *field = copy;
    return 0;
}

int rx_tls_set_ca_pem(rx_tls *tls, const char *pem, size_t len)
{
    char *copy = malloc(len ? len : 1);
    if (copy == NULL)
        return -1;
    memcpy(copy, pem, len);
    free(tls->ca_pem);
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

int rx_tls_apply(const rx_tls *tls, CURL *easy)
{
    /* The handle was reset: it verifies peer and host already. Only turning off is work. */
    if (!tls->verify_peer)
        APPLY(CURLOPT_SSL_VERIFYPEER, 0L);
    if (!tls->verify_host)
        APPLY(CURLOPT_SSL_VERIFYHOST, 0L);
    /* CAs given explicitly replace libcurl's default store rather than add to it: trusting
     * "this CA" must not mean "this CA and every system one". */
    if (tls->ca_pem != NULL || tls->ca_file != NULL || tls->ca_path != NULL) {
        APPLY(CURLOPT_CAINFO, tls->ca_file);
        APPLY(CURLOPT_CAPATH, tls->ca_path);
    }
    if (tls->ca_pem != NULL) {
        /* NOCOPY: the settings outlive every transfer using them (each holds a reference). */
        struct curl_blob blob = {tls->ca_pem, tls->ca_pem_len, CURL_BLOB_NOCOPY};
        APPLY(CURLOPT_CAINFO_BLOB, &blob);
    }
    if (tls->cert_file != NULL) {
        APPLY(CURLOPT_SSLCERT, tls->cert_file);
        APPLY(CURLOPT_SSLCERTTYPE, "PEM");
    }
    if (tls->key_file != NULL)
        APPLY(CURLOPT_SSLKEY, tls->key_file);
    if (tls->key_password != NULL)
        APPLY(CURLOPT_KEYPASSWD, tls->key_password);
    if (tls->ssl_version != 0)
        APPLY(CURLOPT_SSLVERSION, tls->ssl_version);
    return 0;
}

#undef APPLY
