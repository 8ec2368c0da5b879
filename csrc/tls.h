/* TLS settings: one immutable, reference-counted object per client configuration, shared by
 * every transfer it makes (a transfer holds a reference until it is freed).
 *
 * Built once in Python (`_tls.py` decides what httpx's `verify=` / `cert=` / `trust_env` mean),
 * applied to each easy handle by the loop thread. libcurl compares these settings before it
 * reuses a connection, so a connection made with verification off, another CA or another
 * client certificate is never handed to a transfer with different settings. */
#ifndef RX_TLS_H
#define RX_TLS_H

#include <stddef.h>

#include <curl/curl.h>

typedef struct rx_tls {
    int refs;              /* atomic */
    int verify_peer;       /* check the certificate chain */
    int verify_host;       /* check that the certificate names the host */
    char *ca_file;         /* CA bundle file (CURLOPT_CAINFO); NULL: see ca_pem / default */
    char *ca_path;         /* directory of hashed CA certificates (CURLOPT_CAPATH) */
    char *ca_pem;          /* CA certificates in memory, PEM (CURLOPT_CAINFO_BLOB) */
    size_t ca_pem_len;
    char *cert_file;       /* client certificate (PEM), for mutual TLS */
    char *key_file;        /* its private key; NULL: in cert_file */
    char *key_password;
    long ssl_version;      /* CURLOPT_SSLVERSION: minimum | maximum, 0 = libcurl's default */
} rx_tls;

/* A new settings object with verification on and libcurl's default CA store. NULL: no memory. */
rx_tls *rx_tls_new(void);
void rx_tls_ref(rx_tls *tls);
void rx_tls_unref(rx_tls *tls);

/* Zero a secret C string (a passphrase, proxy credentials) in place. */
void rx_wipe_secret(char *secret);

/* rx_wipe_secret, then free it; NULL is fine. */
void rx_free_secret(char *secret);

/* Setters (before the object is shared): copy the string; 0, or -1 for an embedded NUL or no
 * memory. */
int rx_tls_set_string(char **field, const char *value, size_t len);
int rx_tls_set_ca_pem(rx_tls *tls, const char *pem, size_t len);

/* Loop thread: configure a fresh or reset easy handle (only what differs from libcurl's
 * defaults is set). 0, or a CURLcode if libcurl refused an option. */
int rx_tls_apply(const rx_tls *tls, CURL *easy);
/* The same, for the TLS connection to an https:// proxy (CURLOPT_PROXY_* options). */
int rx_tls_apply_to_proxy(const rx_tls *tls, CURL *easy);

#endif
