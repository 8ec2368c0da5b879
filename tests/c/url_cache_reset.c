/* Does a reset easy handle still hold the credentials of the URL it last fetched?
 *
 *   url_cache_reset HOST:PORT
 *
 * requestx's libcurl keeps an easy handle's last URL, and its parsed form, for the handle's
 * next transfer (scripts/libcurl-patches/curl-0003-parsed-url-kept.patch). A URL can carry
 * credentials: a password in its userinfo, a token in its query. curl_easy_reset must take
 * them away with the rest of the handle's options. This program installs allocation hooks
 * (curl_global_init_mem) that keep every block libcurl has live in a list, makes two
 * transfers through one handle to http://HOST:PORT with a URL carrying a password and a
 * token (twice: the second transfer is the one that keeps the parsed form), checks that some
 * live block holds each secret before the reset (so that the search would find them), calls
 * curl_easy_reset, and checks that no live block holds either afterwards. It prints what it
 * found and "all checks passed", or exits 1.
 *
 * Stock libcurl 8.22 fails it too: its reset keeps the last transfer's parsed URL
 * (data->state.uh, state.up) and the credentials taken from it (state.creds) until the next
 * transfer; the patch's reset (Curl_url_forget) drops them with the kept URL.
 *
 * The transfers close their connection (CURLOPT_FORBID_REUSE): a connection kept in the pool
 * keeps the credentials it was opened with until it is closed, by libcurl's design, which is
 * not what this checks. Only blocks still live are searched: a freed block is no longer the
 * handle's (libcurl zeroes a URL's password when it frees it, curl-0003 every copy of the
 * kept URL).
 */
#define _GNU_SOURCE
#include <curl/curl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char PASSWORD[] = "pw-5ecr3t-of-the-userinfo";
static const char TOKEN[] = "tok-5ecr3t-of-the-query";

/* Each block libcurl allocates gets this header in front (32 bytes on 64-bit platforms, so
   the pointer libcurl gets keeps malloc's alignment), in a list of the live ones. */
struct block {
    struct block *prev;
    struct block *next;
    size_t size;
    size_t unused;
};

static struct block live = {&live, &live, 0, 0};
static pthread_mutex_t live_lock = PTHREAD_MUTEX_INITIALIZER;

static void *tracked(struct block *b, size_t size)
{
    b->size = size;
    pthread_mutex_lock(&live_lock);
    b->prev = &live;
    b->next = live.next;
    live.next->prev = b;
    live.next = b;
    pthread_mutex_unlock(&live_lock);
    return b + 1;
}

static struct block *untracked(void *p)
{
    struct block *b = (struct block *)p - 1;
    pthread_mutex_lock(&live_lock);
    b->prev->next = b->next;
    b->next->prev = b->prev;
    pthread_mutex_unlock(&live_lock);
    return b;
}

static void *hook_malloc(size_t size)
{
    struct block *b = malloc(sizeof(*b) + size);
    return b ? tracked(b, size) : NULL;
}

static void hook_free(void *p)
{
    if (p)
        free(untracked(p));
}

static void *hook_realloc(void *p, size_t size)
{
    struct block *b, *moved;
    if (!p)
        return hook_malloc(size);
    b = untracked(p);
    moved = realloc(b, sizeof(*b) + size);
    if (!moved) {
        tracked(b, b->size); /* the old block stays live, as realloc leaves it */
        return NULL;
    }
    return tracked(moved, size);
}

static char *hook_strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = hook_malloc(n);
    if (p)
        memcpy(p, s, n);
    return p;
}

static void *hook_calloc(size_t count, size_t size)
{
    void *p;
    if (size && count > SIZE_MAX / size)
        return NULL;
    p = hook_malloc(count * size);
    if (p)
        memset(p, 0, count * size);
    return p;
}

/* How many live blocks hold `secret` somewhere in their bytes. */
static int holding(const char *secret)
{
    int found = 0;
    struct block *b;
    pthread_mutex_lock(&live_lock);
    for (b = live.next; b != &live; b = b->next)
        if (memmem(b + 1, b->size, secret, strlen(secret)))
            found++;
    pthread_mutex_unlock(&live_lock);
    return found;
}

static size_t discard(char *data, size_t size, size_t count, void *user)
{
    (void)data;
    (void)user;
    return size * count;
}

int main(int argc, char **argv)
{
    char url[512];
    CURL *easy;
    int i, failed = 0, before_password, before_token, after_password, after_token;

    if (argc != 2) {
        fprintf(stderr, "usage: %s HOST:PORT\n", argv[0]);
        return 2;
    }
    snprintf(url, sizeof(url), "http://rxuser:%s@%s/private?token=%s", PASSWORD, argv[1], TOKEN);
    if (curl_global_init_mem(CURL_GLOBAL_DEFAULT, hook_malloc, hook_free, hook_realloc,
                             hook_strdup, hook_calloc) != CURLE_OK) {
        fprintf(stderr, "curl_global_init_mem failed\n");
        return 2;
    }
    printf("libcurl %s\n", curl_version_info(CURLVERSION_NOW)->version);
    easy = curl_easy_init();
    if (!easy)
        return 2;
    for (i = 0; i < 2; i++) {
        long status = 0;
        CURLcode result;
        curl_easy_setopt(easy, CURLOPT_URL, url);
        curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, discard);
        curl_easy_setopt(easy, CURLOPT_FORBID_REUSE, 1L);
        result = curl_easy_perform(easy);
        curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
        if (result != CURLE_OK || status != 200) {
            fprintf(stderr, "transfer %d: %s, status %ld\n", i + 1, curl_easy_strerror(result),
                    status);
            return 2;
        }
    }
    before_password = holding(PASSWORD);
    before_token = holding(TOKEN);
    printf("before curl_easy_reset: %d live blocks hold the password, %d the token\n",
           before_password, before_token);
    if (!before_password || !before_token) {
        printf("FAIL: the search does not see the secrets while the handle has its URL\n");
        failed = 1;
    }
    curl_easy_reset(easy);
    after_password = holding(PASSWORD);
    after_token = holding(TOKEN);
    printf("after curl_easy_reset: %d live blocks hold the password, %d the token\n",
           after_password, after_token);
    if (after_password || after_token) {
        printf("FAIL: a reset handle still holds its last URL's credentials\n");
        failed = 1;
    }
    curl_easy_cleanup(easy);
    curl_global_cleanup();
    if (!failed)
        printf("all checks passed\n");
    return failed;
}
