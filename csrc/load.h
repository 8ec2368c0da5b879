/* A load run: the engine keeps copies of one request in flight, for `python -m requestx.bench`.
 *
 * The loop thread starts `concurrency` copies of a prepared request and, as each one ends,
 * records it (latency, status, bytes, error) and starts the next, until `requests` copies have
 * been started or the run's time is up; then it lets the last ones finish. No Python runs per
 * request, so what is measured is the engine and the server, as wrk measures its own C loop.
 *
 *   rx_load_new()     the caller prepares the request (a transfer, never submitted itself) and
 *                     creates the run; its body is borrowed for the whole run
 *   rx_load_start()   the first copies go to the engine
 *   rx_load_wait()    the caller waits (GIL released), in slices, to run signal handlers
 *   rx_load_stop()    no further copies start (Ctrl-C); those in flight end on their own
 *   rx_load_free()    after the run finished (rx_load_wait returned 0)
 *
 * Copies (rx_transfer_load_copy) are delivered on the loop thread, to a function that records
 * each and submits the next copy; their bodies are counted, not kept.
 */
#ifndef RX_LOAD_H
#define RX_LOAD_H

#include <stdint.h>

#include "engine.h"
#include "transfer.h"

typedef struct rx_load rx_load;

/* What a run saw. latencies_us holds one entry per completed request (errors excluded), in the
 * order they completed. */
typedef struct rx_load_results {
    long completed;          /* requests that got a response (any status) */
    long non_2xx_3xx;        /* ... whose status was not 2xx or 3xx */
    int64_t bytes;           /* response header and body bytes of those */
    const int64_t *latencies_us;
    long errors;             /* requests that ended in an error */
    int error_codes[32];     /* the distinct error codes (CURLcode or RX_E_*), first seen first */
    long error_counts[32];   /* ... and how often each occurred; further codes count in the last */
    int error_kinds;         /* entries used in the two arrays above */
    char first_error_text[256]; /* libcurl's or our message for the first error */
} rx_load_results;

/* NULL when out of memory. `request` is taken as the template (the run takes a reference);
 * requests <= 0 means no count limit, duration_ms <= 0 no time limit (one of them is set). */
rx_load *rx_load_new(rx_engine *e, rx_transfer *request, int concurrency, long requests,
                     long duration_ms);
/* 0, or RX_E_ENGINE_CLOSED / RX_E_NOMEM when not a single copy could be started. */
int rx_load_start(rx_load *l);
/* 0 once every copy has ended, else ETIMEDOUT after timeout_ms. */
int rx_load_wait(rx_load *l, long timeout_ms);
void rx_load_stop(rx_load *l);
/* After rx_load_wait returned 0: the figures (valid until rx_load_free). */
void rx_load_results_of(const rx_load *l, rx_load_results *out);
void rx_load_free(rx_load *l);

#endif
