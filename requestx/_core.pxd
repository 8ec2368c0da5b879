# The C engine's contract, declared once. Every function here is safe to call without the GIL.

from libc.stdint cimport int64_t


cdef extern from "tls.h" nogil:
    ctypedef struct rx_tls:
        int verify_peer
        int verify_host
        char *ca_file
        char *ca_path
        char *cert_file
        char *key_file
        char *key_password
        long ssl_version

    rx_tls *rx_tls_new()
    void rx_tls_unref(rx_tls *tls)
    int rx_tls_set_string(char **field, const char *value, size_t length)
    int rx_tls_set_ca_pem(rx_tls *tls, const char *pem, size_t length)


cdef extern from "route.h" nogil:
    ctypedef struct rx_route:
        char *proxy_url
        char *proxy_username
        char *proxy_password
        char *unix_socket
        char *local_interface
        long ip_resolve

    rx_route *rx_route_new(const char *key, size_t key_len)
    void rx_route_unref(rx_route *route)
    int rx_route_add_proxy_header(rx_route *route, const char *line, size_t length)
    int rx_route_add_sockopt(rx_route *route, int level, int name, const void *value,
                             size_t length)
    void rx_route_set_proxy_tls(rx_route *route, rx_tls *tls)


cdef extern from "buffer.h" nogil:
    ctypedef struct rx_buffer:
        char *data
        size_t len

    void rx_buffer_free_stolen(char *data)
    long rx_buffer_live_count()


cdef extern from "decode.h" nogil:
    ctypedef enum rx_coding:
        RX_CODING_GZIP
        RX_CODING_DEFLATE
        RX_CODING_BR
        RX_CODING_ZSTD

    ctypedef struct rx_decoder:
        pass

    enum:
        RX_DECODE_MORE
        RX_DECODE_NEED_INPUT
        RX_DECODE_INVALID
        RX_DECODE_TRUNCATED
        RX_DECODE_NO_MEMORY

    int rx_decoder_supports(rx_coding coding)
    rx_decoder *rx_decoder_new(rx_coding coding)
    void rx_decoder_free(rx_decoder *d)
    int rx_decoder_feed(rx_decoder *d, const void *data, size_t len)
    size_t rx_decoder_input_left(const rx_decoder *d)
    int rx_decoder_read(rx_decoder *d, void *out, size_t cap, size_t *written)
    int rx_decoder_finish(rx_decoder *d)
    const char *rx_decoder_message(const rx_decoder *d)
    size_t rx_decode_size_hint(rx_coding coding, const void *data, size_t len)
    long rx_decoder_live_count()


cdef extern from "thread.h" nogil:
    void rx_sleep_us(int64_t us)


cdef extern from "platform.h" nogil:
    ctypedef long long rx_socket_t  # the C type decides; Cython converts by its size and sign

    ctypedef struct rx_notifier:
        rx_socket_t read_end

    int rx_platform_select(const char *name, char *names, size_t names_len)
    const char *rx_platform_name()


cdef extern from "transfer.h" nogil:
    ctypedef struct rx_completion_queue:
        rx_notifier notifier

    enum:
        RX_E_CANCELLED
        RX_E_NOMEM
        RX_E_ENGINE_CLOSED
        RX_HTTP_1_1
        RX_HTTP_2_TLS
        RX_HTTP_2_PRIOR_KNOWLEDGE
        RX_MARK_CONTENT_ENCODING
        RX_MARK_SET_COOKIE

    ctypedef struct rx_transfer:
        pass

    ctypedef struct rx_request_options:
        const char *body
        size_t body_len
        int has_body
        long connect_timeout_ms
        long read_timeout_ms
        long write_timeout_ms
        long pool_timeout_ms
        long total_timeout_ms
        int http_version
        int stream
        int upload_stream
        int64_t upload_length
        long max_header_bytes
        int64_t max_body_bytes

    ctypedef struct rx_response:
        long status
        int http_version_used
        int headers_done
        int header_marks
        rx_buffer headers
        int64_t total_time_us
        int error
        int os_errno
        const char error_text[256]  # CURL_ERROR_SIZE: the C header decides

    rx_transfer *rx_transfer_new()
    void rx_transfer_unref(rx_transfer *t)
    int rx_transfer_set_method(rx_transfer *t, const char *method, size_t length)
    int rx_transfer_set_url(rx_transfer *t, const char *url, size_t length)
    int rx_transfer_add_header(rx_transfer *t, const char *name, size_t name_len,
                               const char *value, size_t value_len)
    void rx_transfer_set_options(rx_transfer *t, const rx_request_options *options)
    void rx_transfer_set_tls(rx_transfer *t, rx_tls *tls)
    void rx_transfer_set_route(rx_transfer *t, rx_route *route)
    void rx_transfer_set_completion_queue(rx_transfer *t, rx_completion_queue *cq)
    int rx_transfer_wait(rx_transfer *t, long timeout_ms)
    bint rx_transfer_is_delivered(const rx_transfer *t)
    bint rx_transfer_try_collect(rx_transfer *t)
    const rx_response *rx_transfer_response(const rx_transfer *t)
    const char *rx_transfer_http_version(const rx_transfer *t)
    char *rx_transfer_take_body(rx_transfer *t, size_t *length)
    int rx_stream_ready(rx_transfer *t, int want_body, int arm)
    int rx_stream_wait(rx_transfer *t, int want_body, long timeout_ms)
    char *rx_stream_take(rx_transfer *t, size_t *length, int *resume)
    long rx_upload_feed(rx_transfer *t, const char *data, size_t length, int arm,
                        int *resume) nogil
    enum:
        RX_FEED_OVER
        RX_FEED_NOMEM
    int rx_upload_wait(rx_transfer *t, long timeout_ms)
    void rx_upload_end(rx_transfer *t, int *resume)
    long rx_transfer_live_count()


cdef extern from "completion.h" nogil:
    rx_completion_queue *rx_cq_new()
    void rx_cq_close(rx_completion_queue *cq)
    rx_transfer *rx_cq_drain(rx_completion_queue *cq)
    rx_transfer *rx_cq_collect(rx_transfer *t)


cdef extern from "engine.h" nogil:
    ctypedef struct rx_engine:
        pass

    ctypedef struct rx_limits:
        long max_connections
        long max_keepalive
        long keepalive_expiry_s

    ctypedef struct rx_engine_stats:
        long running
        long completed
        long wakeups
        long sleeps
        long easy_pooled
        long driven
        long taken_spinning
        long poller_changes

    int rx_engine_global_init()
    rx_engine *rx_engine_new(const rx_limits *limits, char *err, size_t err_len)
    int rx_engine_submit(rx_engine *e, rx_transfer *t)
    int rx_engine_submit_deferred(rx_engine *e, rx_transfer *t)
    void rx_engine_flush(rx_engine *e)
    int rx_engine_drive(rx_engine *e, rx_transfer *t, long budget_ms)
    void rx_engine_drive_end(rx_engine *e)
    void rx_engine_cancel(rx_engine *e, rx_transfer *t)
    void rx_engine_resume(rx_engine *e, rx_transfer *t)
    int rx_engine_spin_wait(rx_engine *e, rx_transfer *t)
    void rx_engine_collected(rx_engine *e, rx_transfer *t)
    int rx_engine_close(rx_engine *e, long timeout_ms)
    void rx_engine_free(rx_engine *e) nogil
    void rx_engine_abandon(rx_engine *e)
    void rx_engine_get_stats(rx_engine *e, rx_engine_stats *out)
    long rx_engine_live_easy_handles()


cdef extern from "load.h" nogil:
    ctypedef struct rx_load:
        pass

    ctypedef struct rx_load_results:
        long completed
        long non_2xx_3xx
        int64_t bytes
        const int64_t *latencies_us
        long errors
        int error_codes[32]
        long error_counts[32]
        int error_kinds
        char first_error_text[256]

    rx_load *rx_load_new(rx_engine *e, rx_transfer *request, int concurrency, long requests,
                         long duration_ms)
    int rx_load_start(rx_load *l)
    int rx_load_wait(rx_load *l, long timeout_ms)
    void rx_load_stop(rx_load *l)
    void rx_load_results_of(const rx_load *l, rx_load_results *out)
    void rx_load_free(rx_load *l)

cdef class TLSConfig:
    cdef rx_tls *tls
    cdef dict _fields


cdef class RouteConfig:
    cdef rx_route *route
    cdef readonly bytes key


cdef class Body:
    cdef char *data
    cdef Py_ssize_t size


cdef class CompletionQueue:
    cdef rx_completion_queue *queue
    cdef dict pending
    cdef bint closed


cdef class PendingTransfer:
    cdef rx_transfer *transfer
    cdef Engine engine
    cdef Engine lane_owner         # a blocking stream on a lane: the engine it goes back to
    cdef object body
    cdef bint streaming
    cdef bint blocking
    cdef bint eof
    cdef object fed_chunk          # a fed chunk taken only in part (feed() returned None)
    cdef Py_ssize_t fed_offset     # ... and how much of it was taken
    cdef public object waiter
    cdef void _stop_blocking_stream(self)
    cdef void _give_back_lane(self)
    cdef int _wait_stream(self, int what) except -1
    cdef void _resume(self)
    cdef rx_transfer *_stream_transfer(self) except NULL


cdef class Engine:
    cdef rx_engine *engine
    cdef rx_limits limits
    cdef long max_header_bytes
    cdef int64_t max_body_bytes
    cdef unsigned long fork_generation
    cdef bint closed
    cdef object __weakref__
    # Blocking lanes (Engine.perform): engines of one connection each, one per blocking caller
    cdef int lanes_left            # lanes that may still be made
    cdef list lanes                # every lane made
    cdef list idle_lanes           # lanes no caller holds, most recently used last
    cdef rx_limits lane_limits
    cdef bytes origin              # a lane's: the origin of its last request
    cdef bytes route_key           # a lane's: the route (proxy, ...) of its last request
    cdef void _reserve_lanes(self)
    cdef object _run(self, rx_transfer *t)
    cdef Engine _take_lane(self, bytes url, int http_version, RouteConfig route)
    cdef int _check_open(self) except -1
    cdef rx_transfer *_new_transfer(self, bytes method, bytes url, list headers, bytes body,
                                    tuple timeouts, int http_version, TLSConfig tls,
                                    RouteConfig route, bint stream_response=*,
                                    long long upload_length=*) except NULL
    cdef rx_engine *_live(self) except NULL
    cdef PendingTransfer _start(self, bytes method, bytes url, list headers, bytes body,
                                tuple timeouts, int http_version, TLSConfig tls,
                                RouteConfig route, CompletionQueue queue, bint streaming,
                                bint stream_response, long long upload_length,
                                bint defer_wake)


cdef extern from "gil_probe.h" nogil:
    ctypedef struct rx_gil_stats:
        long long spins
        long long busy
        long long timeouts
        long long skipped

    int rx_gil_probe_init()
    int rx_gil_probe_on()
    int rx_gil_probe_layout_known()
    int rx_gil_held()
    void rx_gil_wait_free()
    void rx_gil_get_stats(rx_gil_stats *out)
