# cython: freethreading_compatible = False
"""The only place Python meets C: the engine handle, the body buffer, the blocking wait.

One blocking request, end to end::

    _hotpath.perform()                        (_hotpath.pyx: for Client and HTTPTransport)
      -> Engine.perform()                     this module: build an rx_transfer, pick the
                                              engine (_take_lane: a blocking lane, or this one)
         -> _run(), GIL released:
            rx_engine_drive()    (drive.c)    an idle engine: this thread runs its loop, or
            rx_engine_submit()   (commands.c) queue it for the loop thread, then
            _wait_blocking()                  spin (rx_engine_spin_wait), then wait on the
                                              transfer's latch (rx_transfer_wait, request.c)
      <- (status, version, raw header block, Body, elapsed, header marks)
    _hotpath.engine_response()  (_hotpath.pyx)

The loop thread (engine.c) never touches Python objects and never takes the GIL.
"""

cimport cython
from cpython.buffer cimport PyBUF_SIMPLE, PyBuffer_FillInfo, PyBuffer_Release, PyObject_GetBuffer
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from cpython.exc cimport PyErr_CheckSignals
from cpython.ref cimport PyObject, Py_XDECREF
from libc.errno cimport EINTR
from libc.math cimport ceil
from libc.string cimport memchr, memcmp

import atexit
import os
import sys
import weakref

cdef extern from "curl/curl.h" nogil:
    const char *curl_version()
    ctypedef struct curl_version_info_data:
        const char *version
        unsigned int version_num
        int features
        const char *ssl_version
        const char *libz_version
        const char * const *protocols
        const char *brotli_version
        const char *nghttp2_version
        const char *zstd_version
        const char *cainfo
        const char *capath
    int CURLVERSION_NOW
    int CURL_VERSION_HTTP2
    int CURL_VERSION_BROTLI
    int CURL_VERSION_ZSTD
    int CURL_VERSION_LIBZ
    int CURL_VERSION_ASYNCHDNS
    int CURL_VERSION_DEBUG
    curl_version_info_data *curl_version_info(int age)

# Which of requestx's patches (scripts/libcurl-patches/) the linked libcurl carries, as
# "name,name,...": setup.py defines it from the linked build's build-info.txt (_patches_define
# there says why a define). Empty for a stock build (REQUESTX_LIBCURL_PATCHES=0) and when
# nothing defines it (a system libcurl).
cdef extern from *:
    """
    #ifndef REQUESTX_LIBCURL_PATCHES
    #define REQUESTX_LIBCURL_PATCHES ""
    #endif
    static const char requestx_libcurl_patches[] = REQUESTX_LIBCURL_PATCHES;
    """
    const char *requestx_libcurl_patches

cdef extern from "heap.h":
    const char *rx_heap_name()
    void rx_heap_stats(int64_t *allocated, int64_t *resident)

# libcurl's global state is set up once, at import, before any engine thread exists, with its
# allocations sent to the engine's heap (csrc/heap.h).
if rx_engine_global_init() != 0:
    raise ImportError("requestx: libcurl global initialisation failed")

LIBCURL_VERSION = curl_version().decode()
# Bits of the last item of a result (perform, PendingTransfer.result/finish/response_head):
# fields the response's header block carries, noted by the engine as it arrived.
MARK_CONTENT_ENCODING = RX_MARK_CONTENT_ENCODING
MARK_SET_COOKIE = RX_MARK_SET_COOKIE

cdef curl_version_info_data *_info = curl_version_info(CURLVERSION_NOW)


cdef _text(const char *value):
    return None if value == NULL else value.decode()


# libcurl's built-in CA store (the build machine's), or None.
LIBCURL_CAINFO = _text(_info.cainfo)
LIBCURL_CAPATH = _text(_info.capath)


def libcurl_info():
    """What the linked libcurl is and can do, as curl_version_info() reports it."""
    protocols = []
    cdef const char * const *p = _info.protocols
    while p != NULL and p[0] != NULL:
        protocols.append(p[0].decode())
        p += 1
    return {
        "version": _text(_info.version),
        "version_num": _info.version_num,
        "ssl": _text(_info.ssl_version),
        "http2": bool(_info.features & CURL_VERSION_HTTP2),
        "brotli": bool(_info.features & CURL_VERSION_BROTLI),
        "zstd": bool(_info.features & CURL_VERSION_ZSTD),
        "libz": bool(_info.features & CURL_VERSION_LIBZ),
        "async_dns": bool(_info.features & CURL_VERSION_ASYNCHDNS),
        "nghttp2": _text(_info.nghttp2_version),
        "protocols": tuple(protocols),
        "cainfo": _text(_info.cainfo),
        "capath": _text(_info.capath),
        # libcurl's own debug build (REQUESTX_LIBCURL_DEBUG=1): its assertions are on.
        "debug": bool(_info.features & CURL_VERSION_DEBUG),
        "patches": tuple(name for name in requestx_libcurl_patches.decode().split(",") if name),
        # Where libcurl's, the engine's and (bundled Linux builds) OpenSSL's memory comes
        # from: "jemalloc 5.3.1" or "libc" (csrc/heap.h).
        "heap": rx_heap_name().decode(),
    }


def heap_stats():
    """The engine's heap (csrc/heap.h) as jemalloc counts it now: {"allocated": bytes handed
    out, "resident": bytes of its pages in memory}; None where the heap is the C library's
    malloc, which keeps no figures of its own for the engine."""
    cdef int64_t allocated, resident
    rx_heap_stats(&allocated, &resident)
    if allocated < 0:
        return None
    return {"allocated": allocated, "resident": resident}


# Interrupted waiters look for Ctrl-C this often (Linux's latch wait also ends early on EINTR).
DEF SIGNAL_CHECK_MS = 50

# What PendingTransfer._wait_stream waits for.
DEF WAIT_HEADERS = 0
DEF WAIT_BODY = 1
DEF WAIT_ROOM = 2

# Bumped in a child after fork(): engines created before it belong to the parent's threads.
cdef unsigned long _fork_generation = 0

# Most blocking lanes an engine makes (Engine._reserve_lanes).
DEF MAX_LANES = 64

def _after_fork_in_child():
    global _fork_generation
    _fork_generation += 1

if hasattr(os, "register_at_fork"):  # not on Windows, which has no fork()
    os.register_at_fork(after_in_child=_after_fork_in_child)

# Engines with a running loop thread. At interpreter exit they are stopped before libcurl's and
# OpenSSL's own exit handlers run, so no loop thread is left inside them at that point.
_live_engines = weakref.WeakSet()


@atexit.register
def _close_engines_at_exit():
    for engine in list(_live_engines):
        engine.close()


class EngineError(Exception):
    """A transfer failed inside the engine. `code` is a CURLcode or one of requestx's own
    (RX_E_*, >= 1000), `message` libcurl's or the engine's text, `os_errno` the system's
    errno behind a failed socket call (0 if none); `_exceptions.py` turns them into the
    httpx exception class and a message in the user's words."""

    def __init__(self, int code, str message, int os_errno=0):
        super().__init__(code, message)
        self.code = code
        self.message = message
        self.os_errno = os_errno

    def __str__(self):
        return self.message


cdef object _transfer_failure(const rx_response *r):
    """The EngineError for a transfer that ended with an error."""
    return EngineError(r.error, r.error_text.decode("utf-8", "replace"), r.os_errno)


cdef class TLSConfig:
    """TLS settings shared by every transfer of a client (see csrc/tls.h). Immutable once
    built; `_tls.py` decides what httpx's verify=/cert=/trust_env mean and builds one.

    ca_pem: CA certificates as PEM bytes (kept in memory, as from an ssl.SSLContext);
    ssl_version: a CURL_SSLVERSION_* minimum or'ed with a CURL_SSLVERSION_MAX_* (0: default)."""

    def __cinit__(self, bint verify_peer=True, bint verify_host=True, bytes ca_file=None,
                  bytes ca_path=None, bytes ca_pem=None, bytes cert_file=None,
                  bytes key_file=None, bytes key_password=None, long ssl_version=0):
        self.tls = rx_tls_new()
        if self.tls == NULL:
            raise MemoryError()
        self._fields = {
            "verify_peer": verify_peer, "verify_host": verify_host, "ca_file": ca_file,
            "ca_path": ca_path, "ca_pem": ca_pem, "cert_file": cert_file, "key_file": key_file,
            "key_password": key_password, "ssl_version": ssl_version,
        }
        self.tls.verify_peer = verify_peer
        self.tls.verify_host = verify_host
        self.tls.ssl_version = ssl_version
        _tls_string(&self.tls.ca_file, ca_file, "ca_file")
        _tls_string(&self.tls.ca_path, ca_path, "ca_path")
        _tls_string(&self.tls.cert_file, cert_file, "cert_file")
        _tls_string(&self.tls.key_file, key_file, "key_file")
        _tls_string(&self.tls.key_password, key_password, "key_password")
        if ca_pem is not None and rx_tls_set_ca_pem(self.tls, PyBytes_AS_STRING(ca_pem),
                                                    PyBytes_GET_SIZE(ca_pem)) != 0:
            raise MemoryError()

    def __dealloc__(self):
        rx_tls_unref(self.tls)
        self.tls = NULL

    def fields(self):
        """The constructor's arguments, to build a variant of these settings."""
        return dict(self._fields)

    @property
    def verify_peer(self):
        return bool(self.tls.verify_peer)

    @property
    def verify_host(self):
        return bool(self.tls.verify_host)

    def __repr__(self):
        return (f"<TLSConfig verify_peer={self.verify_peer} verify_host={self.verify_host} "
                f"ca_file={_c_text(self.tls.ca_file)!r} ca_path={_c_text(self.tls.ca_path)!r} "
                f"cert_file={_c_text(self.tls.cert_file)!r}>")


cdef int _tls_string(char **field, bytes value, str name) except -1:
    if value is None:
        return 0
    if rx_tls_set_string(field, PyBytes_AS_STRING(value), PyBytes_GET_SIZE(value)) != 0:
        raise ValueError(f"{name} must not contain a NUL character")
    return 0


cdef class RouteConfig:
    """How a transfer's connection is made, when not straight to the URL's host: a proxy, a
    Unix socket, a local address, socket options (see csrc/route.h). Immutable once built;
    `_routing.py` (`engine_route`) decides what httpx's options mean and builds one.

    key: tells this route from others that reach the same origin (connections are never
    shared between routes); proxy_url: with its scheme (http, https, socks5, socks5h) and no
    credentials; proxy_username/proxy_password: SOCKS5 credentials; proxy_headers: lines
    "Name: value" for an HTTP proxy only (Proxy-Authorization among them); proxy_tls: TLS to
    an https:// proxy; interface: CURLOPT_INTERFACE; ip_resolve: CURLOPT_IPRESOLVE;
    socket_options: (level, name, int or bytes) triples given to setsockopt()."""

    def __cinit__(self, bytes key not None, bytes proxy_url=None, bytes proxy_username=None,
                  bytes proxy_password=None, list proxy_headers=None, TLSConfig proxy_tls=None,
                  bytes unix_socket=None, bytes interface=None, long ip_resolve=0,
                  list socket_options=None):
        cdef bytes line, packed
        self.route = rx_route_new(PyBytes_AS_STRING(key), PyBytes_GET_SIZE(key))
        if self.route == NULL:
            raise ValueError("a route key must not contain a NUL character")
        self.key = key
        _tls_string(&self.route.proxy_url, proxy_url, "proxy_url")
        _tls_string(&self.route.proxy_username, proxy_username, "proxy_username")
        _tls_string(&self.route.proxy_password, proxy_password, "proxy_password")
        _tls_string(&self.route.unix_socket, unix_socket, "unix_socket")
        _tls_string(&self.route.local_interface, interface, "interface")
        self.route.ip_resolve = ip_resolve
        for line in proxy_headers or ():
            if rx_route_add_proxy_header(self.route, PyBytes_AS_STRING(line),
                                         PyBytes_GET_SIZE(line)) != 0:
                raise ValueError("a proxy header must not contain a NUL character")
        if proxy_tls is not None:
            rx_route_set_proxy_tls(self.route, proxy_tls.tls)
        for level, name, value in socket_options or ():
            packed = _sockopt_value(value)
            if rx_route_add_sockopt(self.route, level, name, PyBytes_AS_STRING(packed),
                                    PyBytes_GET_SIZE(packed)) != 0:
                raise MemoryError()

    def __dealloc__(self):
        rx_route_unref(self.route)
        self.route = NULL

    def __repr__(self):
        return f"<RouteConfig key={self.key!r}>"


cdef bytes _sockopt_value(object value):
    """What setsockopt() is given for an option's value: a C int, or the bytes as they are."""
    if isinstance(value, int) and not isinstance(value, bool):
        return int(value).to_bytes(sizeof(int), sys.byteorder, signed=True)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    raise TypeError(f"a socket option's value must be an int or bytes, not {value!r}")


cdef object _c_text(const char *value):
    return None if value == NULL else value.decode("utf-8", "replace")


cdef char *_EMPTY = ""  # what an empty body exports (a buffer pointer must not be NULL)


cdef class Body:
    """A response body in a C buffer, exported read-only through the buffer protocol.

    `memoryview(body)` and `orjson.loads(body)` read it in place; nothing copies it until
    someone asks for `bytes`."""

    def __dealloc__(self):
        rx_buffer_free_stolen(self.data)

    def __len__(self):
        return self.size

    def __getbuffer__(self, Py_buffer *view, int flags):
        # PyBuffer_FillInfo refuses writable requests because readonly=1.
        cdef char *data = self.data if self.data != NULL else _EMPTY
        PyBuffer_FillInfo(view, self, data, self.size, 1, flags)

    def __releasebuffer__(self, Py_buffer *view):
        pass

    def __bytes__(self):
        return PyBytes_FromStringAndSize(self.data, self.size)

    def __repr__(self):
        return f"<Body {self.size} bytes>"


# --- Content decoders (csrc/decode.h) ---------------------------------------------------------

cdef extern from "Python.h":
    # The same functions cpython.bytes declares, with raw pointers: read() grows its result in
    # place (_PyBytes_Resize) and so owns the reference itself until it hands it out.
    PyObject *_bytes_new "PyBytes_FromStringAndSize"(const char *data, Py_ssize_t size)
    int _bytes_resize "_PyBytes_Resize"(PyObject **string, Py_ssize_t size)
    char *_bytes_data "PyBytes_AS_STRING"(PyObject *string)

_CODINGS = {"gzip": RX_CODING_GZIP, "deflate": RX_CODING_DEFLATE, "br": RX_CODING_BR,
            "zstd": RX_CODING_ZSTD}

# A step that starts with this much input still to decode, or this much room to fill, runs
# without the GIL: 16 KiB of gzipped JSON decodes to 90 KB in about 90 us here (4 KiB in 23 us,
# 64 KiB in 360 us; benchmarks/decode_gzip.py's body). Smaller steps keep the GIL: releasing
# and retaking it would cost about as much as they let other threads run.
DEF NOGIL_INPUT = 16384
DEF NOGIL_ROOM = 262144
# read()'s first buffer without a size hint: 8 times the input (JSON and text shrink 5-10 times
# under gzip), at least 32 KiB; it doubles when full, up to the limit.
DEF FIRST_ROOM = 32768
# The most read() allocates at once, on a size hint (untrusted: a body's own claim) or on the
# input's size; beyond it the buffer doubles as it fills.
DEF HINT_ROOM = 64 << 20


def decoder_codings():
    """The content codings this build decodes in C: gzip and deflate, and br and zstd when the
    extension links brotli and zstd (every bundled build but the MinGW cross-build's)."""
    return tuple(name for name, code in _CODINGS.items() if rx_decoder_supports(code))


class DecoderError(Exception):
    """A Decoder could not decode its input: `truncated` is True when the body ended before the
    end of the compressed stream (finish()), False for data that is not valid in the coding;
    `detail` is the codec's own words. `_decoders.py` turns it into DecodingError."""

    def __init__(self, str detail, bint truncated=False):
        super().__init__(detail)
        self.detail = detail
        self.truncated = truncated


cdef class Decoder:
    """One body's content coding undone in C (csrc/decode.h): feed() a piece, then read() until
    `needs_input`, at most `limit` bytes per read(); finish() at the end of the body.

    Not for two threads at once: a read() runs without the GIL for large pieces, and a second
    call meanwhile raises RuntimeError."""

    cdef rx_decoder *d
    cdef int coding
    cdef Py_buffer view  # the piece being decoded, held until it is used up
    cdef bint holding
    cdef bint busy
    cdef readonly bint needs_input

    def __cinit__(self, str coding):
        code = _CODINGS.get(coding)
        if code is None or not rx_decoder_supports(code):
            raise ValueError(f"this build cannot decode {coding!r}")
        self.coding = code
        self.d = rx_decoder_new(code)
        if self.d == NULL:
            raise MemoryError()
        self.needs_input = True

    def __dealloc__(self):
        self._release()
        rx_decoder_free(self.d)

    cdef void _release(self):
        if self.holding:
            self.holding = False
            PyBuffer_Release(&self.view)

    cdef int _enter(self) except -1:
        if self.busy:
            raise RuntimeError("a Decoder is in use by another thread")
        self.busy = True
        return 0

    def feed(self, data):
        """The next piece of the body (any object with the buffer protocol, held, not copied,
        until read() has decoded all of it). The last piece must be used up first."""
        self._enter()
        try:
            if not self.needs_input:
                raise RuntimeError("the last piece fed to this Decoder is not decoded yet")
            self._release()
            PyObject_GetBuffer(data, &self.view, PyBUF_SIMPLE)
            self.holding = True
            rx_decoder_feed(self.d, self.view.buf, <size_t>self.view.len)
            self.needs_input = self.view.len == 0
            if self.needs_input:
                self._release()
        finally:
            self.busy = False

    def size_hint(self):
        """The decoded size the fed piece announces, taken as the whole body (gzip's ISIZE,
        zstd's frame content size), or 0. Untrusted: a hint for sizing, no more."""
        if not self.holding:
            return 0
        cdef size_t hint = rx_decode_size_hint(<rx_coding>self.coding, self.view.buf,
                                               <size_t>self.view.len)
        return min(hint, <size_t>HINT_ROOM)

    def read(self, Py_ssize_t limit, Py_ssize_t hint=0):
        """Decoded bytes, at most `limit` (> 0): all the fed piece gives, unless that is more,
        in which case `needs_input` stays False and the next read() goes on. `hint`: the size
        expected (size_hint()), to allocate once. Raises DecoderError for invalid data."""
        if limit <= 0:
            raise ValueError("limit must be positive")
        if self.needs_input:
            return b""
        self._enter()
        cdef rx_decoder *d = self.d
        cdef Py_ssize_t size, pos = 0
        cdef size_t written = 0
        cdef int status
        cdef PyObject *out = NULL
        cdef char *room
        cdef size_t left = rx_decoder_input_left(d)
        try:
            if hint > 0:
                size = min(hint + 1, limit, <Py_ssize_t>HINT_ROOM)
            else:
                size = <Py_ssize_t>min(left, <size_t>(HINT_ROOM // 8)) * 8
                size = min(limit, max(<Py_ssize_t>FIRST_ROOM, size))
            out = _bytes_new(NULL, size)
            if out == NULL:
                raise MemoryError()
            while True:
                room = _bytes_data(out) + pos
                if rx_decoder_input_left(d) >= NOGIL_INPUT or size - pos >= NOGIL_ROOM:
                    with nogil:
                        status = rx_decoder_read(d, room, <size_t>(size - pos), &written)
                else:
                    status = rx_decoder_read(d, room, <size_t>(size - pos), &written)
                pos += <Py_ssize_t>written
                if status < 0:
                    self._release()
                    self.needs_input = True
                    if status == RX_DECODE_NO_MEMORY:
                        raise MemoryError(rx_decoder_message(d).decode("utf-8", "replace"))
                    raise DecoderError(rx_decoder_message(d).decode("utf-8", "replace"))
                if status == RX_DECODE_NEED_INPUT:
                    self._release()
                    self.needs_input = True
                    break
                if size == limit:
                    break  # full, and no more wanted now: needs_input stays False
                size = min(limit, size * 2 if size < limit // 2 else limit)
                if _bytes_resize(&out, size) < 0:
                    out = NULL
                    raise MemoryError()
            if pos == 0:
                return b""
            if pos < size and _bytes_resize(&out, pos) < 0:
                out = NULL
                raise MemoryError()
            result = <object>out
            return result
        finally:
            Py_XDECREF(out)
            self.busy = False

    def finish(self):
        """The body has ended: raises DecoderError (truncated=True) if the compressed stream
        stopped before its end."""
        self._enter()
        try:
            self._release()
            self.needs_input = True
            status = rx_decoder_finish(self.d)
            if status == RX_DECODE_TRUNCATED:
                raise DecoderError("truncated", True)
            if status < 0:
                raise DecoderError(rx_decoder_message(self.d).decode("utf-8", "replace"))
        finally:
            self.busy = False


cdef inline long _ms(object seconds) except? -2:
    """Seconds (float or None) to the engine's milliseconds (-1 = no timeout)."""
    if seconds is None:
        return -1
    cdef double s = seconds
    if not s >= 0:  # also refuses NaN
        raise ValueError(f"timeouts must be >= 0 or None, not {seconds!r}")
    if s > 1e9:
        return -1  # longer than 30 years: no timeout (and no overflow)
    # Rounded up: a positive timeout, however small, stays positive (it expires, at once).
    return <long>ceil(s * 1000.0)


def timeouts_ms(connect, read, write, pool, total=None):
    """Convert a Timeout's values (seconds or None) into the tuple perform() takes."""
    if total is None:
        return (_ms(connect), _ms(read), _ms(write), _ms(pool))
    return (_ms(connect), _ms(read), _ms(write), _ms(pool), _ms(total))


cdef inline int _check(int rc) except -1:
    if rc != 0:
        raise EngineError(rc, _setter_message(rc))
    return 0


cdef str _setter_message(int rc):
    if rc == 1009:
        return "header names must be tokens and values must not contain CR, LF or NUL"
    if rc == 1010:
        return "URL contains a control character, a space or a non-ASCII byte"
    if rc == 1011:
        return "method must be an HTTP token"
    return "out of memory"


cdef inline Py_ssize_t _origin_length(bytes url):
    """The length of `url`'s origin, scheme://host:port: up to the first "/" after the
    scheme's "//" (the whole URL if there is none)."""
    cdef const char *start = PyBytes_AS_STRING(url)
    cdef Py_ssize_t length = PyBytes_GET_SIZE(url)
    if length <= 8:
        return length
    cdef const char *slash = <const char *>memchr(start + 8, ord("/"), length - 8)
    return length if slash == NULL else slash - start


cdef inline bint _starts_with(bytes url, bytes origin, Py_ssize_t origin_length):
    """Whether `origin` (None: never) is `url`'s first `origin_length` bytes."""
    return (origin is not None and PyBytes_GET_SIZE(origin) == origin_length and
            memcmp(PyBytes_AS_STRING(origin), PyBytes_AS_STRING(url), origin_length) == 0)


cdef class Engine:
    """A loop thread with its connection pool. One per Client (or shared by the top-level API).

    >>> engine = Engine(100, 20, 5)
    >>> status, version, raw_headers, body, elapsed = engine.perform(
    ...     b"GET", b"http://127.0.0.1:8000/", [(b"Accept", b"*/*")], None,
    ...     (5000, 5000, 5000, 5000), 0, None)
    """

    def __cinit__(self, max_connections=None, max_keepalive=None, keepalive_expiry=None,
                  max_header_bytes=None, max_body_bytes=None, bint blocking_lanes=False):
        self.limits.max_connections = 0 if max_connections is None else max_connections
        self.limits.max_keepalive = -1 if max_keepalive is None else max_keepalive
        if keepalive_expiry is None:
            self.limits.keepalive_expiry_s = -1
        else:
            # libcurl counts whole seconds; round up so a short expiry is not "never reuse".
            self.limits.keepalive_expiry_s = max(1, <long>(keepalive_expiry + 0.999))
        if max_header_bytes is None:
            self.max_header_bytes = 0  # the C default
        elif not 0 < max_header_bytes <= 1 << 30:
            raise ValueError(f"max_header_bytes must be between 1 and 2**30, not {max_header_bytes!r}")
        else:
            self.max_header_bytes = max_header_bytes
        if max_body_bytes is None:
            self.max_body_bytes = 0  # no limit
        elif not 0 < max_body_bytes < 1 << 62:
            raise ValueError(f"max_body_bytes must be a positive number of bytes or None, not {max_body_bytes!r}")
        else:
            self.max_body_bytes = max_body_bytes
        self.engine = NULL
        self.fork_generation = _fork_generation
        self.lanes = []
        self.idle_lanes = []
        self.lanes_left = 0
        if blocking_lanes:
            self._reserve_lanes()

    cdef void _reserve_lanes(self):
        """Blocking lanes: HTTP/1.1 requests and streams of blocking callers run on engines
        of their own, one connection each, so that threads do not queue behind one loop
        thread (docs/architecture.md, "Blocking lanes"). The lanes' connections come out of
        max_connections, which stays a cap on the whole client: up to MAX_LANES lanes, and
        never more than half of the connections."""
        cdef long lanes = MAX_LANES
        if self.limits.max_connections > 0:
            lanes = min(lanes, self.limits.max_connections // 2)
            self.limits.max_connections -= lanes
        self.lanes_left = lanes
        self.lane_limits = self.limits
        self.lane_limits.max_connections = 1
        # One idle connection kept per lane, none if the client keeps none.
        self.lane_limits.max_keepalive = 0 if self.limits.max_keepalive == 0 else 1

    def __dealloc__(self):
        cdef rx_engine *e = self.engine
        self.engine = NULL
        if e != NULL:
            if self.fork_generation == _fork_generation:
                with nogil:  # joins the loop thread (up to 2 s): other threads run meanwhile
                    rx_engine_free(e)
            else:
                rx_engine_abandon(e)

    cdef rx_transfer *_new_transfer(self, bytes method, bytes url, list headers, bytes body,
                                    tuple timeouts, int http_version, TLSConfig tls,
                                    RouteConfig route, bint stream_response=False,
                                    long long upload_length=-2) except NULL:
        """A transfer holding this request and the engine's limits on what a response may make
        it hold; the caller owns its one reference (released here if the request is refused).
        stream_response and upload_length as for open_stream()."""
        cdef rx_transfer *t = rx_transfer_new()
        cdef rx_request_options options
        if t == NULL:
            raise MemoryError()
        try:
            _fill_request(t, &options, method, url, headers, body, timeouts, http_version, tls,
                          route)
        except BaseException:
            rx_transfer_unref(t)
            raise
        options.max_header_bytes = self.max_header_bytes
        options.max_body_bytes = self.max_body_bytes
        options.stream = stream_response
        options.upload_stream = upload_length >= -1
        options.upload_length = upload_length
        rx_transfer_set_options(t, &options)
        return t

    cdef int _check_open(self) except -1:
        if self.closed:
            raise EngineError(RX_E_ENGINE_CLOSED, "the client has been closed")
        return 0

    cdef rx_engine *_live(self) except NULL:
        """The running engine, started on first use (and again in a forked child)."""
        cdef char err[256]
        self._check_open()
        if self.engine != NULL and self.fork_generation != _fork_generation:
            rx_engine_abandon(self.engine)
            self.engine = NULL
        if self.engine == NULL:
            self.engine = rx_engine_new(&self.limits, err, sizeof(err))
            if self.engine == NULL:
                raise EngineError(RX_E_NOMEM, "cannot start the requestx engine: " +
                                  err.decode(errors="replace"))
            self.fork_generation = _fork_generation
            _live_engines.add(self)
        return self.engine

    def close(self):
        """Stop the loop thread; requests still running fail with the engine-closed code.

        The C struct stays allocated until this object is freed, so a request racing with
        close() on another thread fails cleanly instead of touching freed memory."""
        cdef rx_engine *e = self.engine
        if self.closed:
            return
        self.closed = True
        self.lanes_left = 0
        for lane in self.lanes:
            lane.close()
        if e != NULL and self.fork_generation == _fork_generation:
            with nogil:
                rx_engine_close(e, 2000)

    def stats(self):
        """Loop counters, for tests and debugging."""
        cdef rx_engine_stats s
        if self.engine == NULL:
            totals = {"running": 0, "completed": 0, "wakeups": 0, "sleeps": 0,
                      "easy_pooled": 0, "driven": 0, "taken_spinning": 0, "poller_changes": 0,
                      "engines": 0}
        else:
            rx_engine_get_stats(self.engine, &s)
            totals = {"running": s.running, "completed": s.completed, "wakeups": s.wakeups,
                      "sleeps": s.sleeps, "easy_pooled": s.easy_pooled, "driven": s.driven,
                      "taken_spinning": s.taken_spinning, "poller_changes": s.poller_changes,
                      "engines": 1}  # engines started: loop threads
        totals["lanes"] = len(self.lanes)
        for lane in self.lanes:  # the client's figures include its blocking lanes
            for key, value in lane.stats().items():
                totals[key] += value
        return totals

    def perform(self, bytes method not None, bytes url not None, list headers not None,
                bytes body, tuple timeouts not None, int http_version, TLSConfig tls,
                RouteConfig route):
        """Run one request to completion, blocking this thread (GIL released while waiting).

        headers: list of (name, value) or (name, lower_name, value) bytes tuples; body: bytes or None; timeouts: the tuple
        from timeouts_ms(). Returns (status, http_version, raw_header_block, Body, elapsed_s)
        or raises EngineError; KeyboardInterrupt (or any signal handler's exception) cancels
        the transfer and propagates."""
        self._check_open()
        cdef rx_transfer *t = self._new_transfer(method, url, headers, body, timeouts,
                                                 http_version, tls, route)
        cdef Engine lane
        try:
            lane = self._take_lane(url, http_version, route)
            if lane is None:
                return self._run(t)
            try:
                return lane._run(t)
            finally:
                self.idle_lanes.append(lane)
        finally:
            rx_transfer_unref(t)

    cdef Engine _take_lane(self, bytes url, int http_version, RouteConfig route):
        """An idle lane for a blocking HTTP/1.1 request to `url`: the most recent one whose
        connection goes to its origin, else a new one while lanes are left, else the least
        recently used. None when the engine has no lanes, for HTTP/2, and when every lane is
        held: the request then runs on this engine. The caller puts the lane back in
        idle_lanes once its transfer is over. Runs under the GIL, which makes the list
        operations atomic between threads."""
        if http_version != RX_HTTP_1_1 or not (self.lanes_left or self.idle_lanes):
            return None
        cdef Engine lane
        cdef Py_ssize_t i
        # The origin (scheme://host:port) is compared in place: slicing it out of the URL
        # with bytes.find cost 1,700 instructions a request, more than the rest of this.
        cdef Py_ssize_t origin_length = _origin_length(url)
        cdef bytes route_key = None if route is None else route.key
        for i in range(len(self.idle_lanes) - 1, -1, -1):
            lane = self.idle_lanes[i]
            if _starts_with(url, lane.origin, origin_length) and lane.route_key == route_key:
                del self.idle_lanes[i]
                return lane
        if self.lanes_left > 0:
            self.lanes_left -= 1
            lane = Engine.__new__(Engine)
            lane.limits = self.lane_limits
            lane.max_header_bytes = self.max_header_bytes
            lane.max_body_bytes = self.max_body_bytes
            try:
                lane._live()
            except EngineError:
                # No thread to be had (a process limit): this engine serves instead, and no
                # more lanes are tried.
                self.lanes_left = 0
                return None
            self.lanes.append(lane)
        elif self.idle_lanes:
            lane = self.idle_lanes.pop(0)
        else:
            return None
        lane.origin = url[:origin_length]
        lane.route_key = route_key
        return lane

    cdef object _run(self, rx_transfer *t):
        """Run `t` on this engine, blocking: drive it from this thread if the engine is idle
        (engine.h), else submit it to the loop thread and wait. Returns _take_result(t)."""
        cdef rx_engine *e = self._live()
        cdef int driven
        with nogil:
            driven = rx_engine_drive(e, t, SIGNAL_CHECK_MS)
            if driven and rx_transfer_is_delivered(t):
                # gil_probe.h: ask for the GIL when it is free, not before. (A drive that ended
                # early takes the GIL only to check signals and waits again: no spin for it.)
                rx_gil_wait_free()
        try:
            if not driven and rx_engine_submit(e, t) != 0:
                raise EngineError(RX_E_ENGINE_CLOSED, "the client has been closed")
            if not (driven and rx_transfer_try_collect(t)):
                _wait_blocking(e, t, driven)
        finally:
            rx_engine_drive_end(e)
        return _take_result(t)


    def start_load(self, bytes method not None, bytes url not None, list headers not None,
                   bytes body, tuple timeouts not None, int http_version, TLSConfig tls,
                   RouteConfig route, int concurrency, long requests, double duration):
        """Start a load run for `python -m requestx.bench` (csrc/load.h) and return its
        LoadRun: the engine keeps `concurrency` copies of this request in flight, starting the
        next as each ends, until `requests` have started (0: no limit) or `duration` seconds
        have passed (0: no limit). No Python runs per request."""
        cdef rx_engine *e = self._live()
        cdef rx_transfer *t
        cdef rx_load *run = NULL
        cdef LoadRun load
        cdef int rc
        if concurrency < 1:
            raise ValueError(f"concurrency must be at least 1, not {concurrency}")
        if requests <= 0 and duration <= 0:
            raise ValueError("a load run needs a number of requests or a duration")
        t = self._new_transfer(method, url, headers, body, timeouts, http_version, tls, route)
        try:
            run = rx_load_new(e, t, concurrency, max(requests, 0),
                              <long>ceil(duration * 1000) if duration > 0 else 0)
            if run == NULL:
                raise MemoryError()
        finally:
            rx_transfer_unref(t)  # the run holds its own reference to the template
        load = LoadRun.__new__(LoadRun)
        load.run = run
        load.engine = self
        load.body = body  # borrowed by every copy until the run is freed
        rc = rx_load_start(run)
        if rc != 0:
            raise EngineError(rc, "no request of the load run could be started")
        return load

    def submit(self, bytes method not None, bytes url not None, list headers not None,
               bytes body, tuple timeouts not None, int http_version, TLSConfig tls,
               RouteConfig route, CompletionQueue queue not None, bint defer_wake=False):
        """Start a request whose completion is delivered to `queue` (an event loop's).

        Returns a PendingTransfer at once; once `queue.drain()` has returned it,
        `pending.result()` gives what perform() would have returned (or raises EngineError).
        With defer_wake the loop thread is not woken for it until flush(): the event loop's
        bridge calls that once per turn, after a burst of submits."""
        return self._start(method, url, headers, body, timeouts, http_version, tls, route,
                           queue, False, False, -2, defer_wake)

    def flush(self):
        """Wake the loop thread for the submits made with defer_wake, if it has not taken them
        already. Harmless when nothing is owed or the engine is closed."""
        if self.engine != NULL:
            rx_engine_flush(self.engine)

    def open_stream(self, bytes method not None, bytes url not None, list headers not None,
                    bytes body, tuple timeouts not None, int http_version, TLSConfig tls,
                    RouteConfig route, CompletionQueue queue, bint stream_response=True,
                    long long upload_length=-2):
        """Start a request that is not a single perform(): its response consumed as it
        arrives (stream_response), and/or its body fed while it runs (upload_length >= 0 for
        a known length, -1 for chunked; -2 when `body` is the whole body). See
        PendingTransfer's stream and feed methods. Like every engine body, the response is
        not content-decoded.

        queue None: a blocking caller (waits in this thread); otherwise an event loop's
        queue, which is notified whenever an armed wait can go on."""
        return self._start(method, url, headers, body, timeouts, http_version, tls, route,
                           queue, True, stream_response, upload_length, False)

    cdef PendingTransfer _start(self, bytes method, bytes url, list headers, bytes body,
                                tuple timeouts, int http_version, TLSConfig tls,
                                RouteConfig route, CompletionQueue queue, bint streaming,
                                bint stream_response, long long upload_length,
                                bint defer_wake):
        """submit() and open_stream(): a PendingTransfer on its way."""
        cdef Engine lane
        cdef int rc
        if queue is not None and queue.closed:
            raise EngineError(RX_E_ENGINE_CLOSED, "the event loop's completion queue is closed")
        self._check_open()
        cdef PendingTransfer pending = PendingTransfer.__new__(PendingTransfer)
        pending.transfer = self._new_transfer(method, url, headers, body, timeouts,
                                              http_version, tls, route, stream_response,
                                              upload_length)
        # A blocking stream holds its lane until it is closed (_give_back_lane), as it would
        # hold a connection of the pool.
        lane = None if queue is not None else self._take_lane(url, http_version, route)
        if lane is None:
            pending.engine = self
        else:
            pending.engine = lane
            pending.lane_owner = self
        cdef rx_engine *e = pending.engine._live()
        pending.body = body  # borrowed by C until the transfer completes
        pending.streaming = streaming
        if queue is not None:
            rx_transfer_set_completion_queue(pending.transfer, queue.queue)
        if defer_wake:
            rc = rx_engine_submit_deferred(e, pending.transfer)
        else:
            rc = rx_engine_submit(e, pending.transfer)
        if rc != 0:
            raise EngineError(RX_E_ENGINE_CLOSED, "the client has been closed")
        # Only now: a blocking PendingTransfer is stopped and waited for when let go of, and
        # one that was never submitted would be waited for forever.
        pending.blocking = queue is None
        if queue is not None:
            queue.pending[<size_t>pending.transfer] = pending
        return pending


# The garbage collector must not clear these before __dealloc__ runs: a PendingTransfer's
# `body` is the request body the loop thread borrows, and __dealloc__ first stops the transfer
# (blocking streams) so that the body outlives C's use of it; a CompletionQueue's `pending`
# keeps those PendingTransfers alive until close() has waited for them. A cycle through either
# would otherwise be cleared (body released) while C still reads it.
@cython.no_gc_clear
cdef class PendingTransfer:
    """A request running on the engine for an event loop (see Engine.submit)."""

    def __dealloc__(self):
        if self.transfer != NULL:
            if self.blocking:
                self._stop_blocking_stream()
            rx_transfer_unref(self.transfer)
            self.transfer = NULL
        self._give_back_lane()

    cdef void _give_back_lane(self):
        """A blocking stream's lane is free again once its transfer is over (done, or
        stopped and let go of by the loop thread)."""
        cdef Engine owner = self.lane_owner
        if owner is None:
            return
        self.lane_owner = None
        # Its list is None when the garbage collector took the owning engine apart first (a
        # stream's error kept in a reference cycle with the client): nothing to give back to.
        if owner.idle_lanes is not None:
            owner.idle_lanes.append(self.engine)

    cdef void _stop_blocking_stream(self):
        """A blocking stream let go of: cancel it and wait until the loop thread is done with
        it (it borrows the request body). Not in a forked child, whose engine has no thread."""
        cdef rx_transfer *t = self.transfer
        cdef rx_engine *e = self.engine.engine
        if rx_transfer_is_delivered(t) or e == NULL:
            return
        if self.engine.fork_generation != _fork_generation:
            return
        with nogil:
            rx_engine_cancel(e, t)
            rx_transfer_wait(t, -1)

    def cancel(self):
        """Ask the loop thread to stop it (no effect once it has finished)."""
        if self.transfer != NULL and self.engine.engine != NULL:
            rx_engine_cancel(self.engine.engine, self.transfer)

    def result(self):
        """(status, http_version, raw_header_block, Body, elapsed_s), or raises EngineError.
        Only valid once the transfer came out of CompletionQueue.drain(), and only once: the
        C transfer is released here, so a kept response or exception (whose traceback holds
        this object) does not pin it."""
        cdef rx_transfer *t = self.transfer
        if t == NULL:
            raise RuntimeError("PendingTransfer.result() was already taken")
        self.transfer = NULL
        self.body = None
        try:
            return _take_result(t)
        finally:
            rx_transfer_unref(t)


    # -- streaming (transfers from Engine.open_stream) --

    cdef int _wait_stream(self, int what) except -1:
        """Block (GIL released) until the stream can go on: its response head is in
        (WAIT_HEADERS), body bytes are (WAIT_BODY), or the fed request body has room
        (WAIT_ROOM); or the transfer is over. Ctrl-C cancels the transfer."""
        cdef rx_transfer *t = self.transfer
        cdef int rc
        if what != WAIT_ROOM and rx_stream_ready(t, what == WAIT_BODY, 0):
            # No need to let go of the GIL: with other threads waiting for it, getting it back
            # costs a sleep and a wake-up.
            return 0
        while True:
            with nogil:
                if what == WAIT_ROOM:
                    rc = rx_upload_wait(t, SIGNAL_CHECK_MS)
                else:
                    rc = rx_stream_wait(t, what == WAIT_BODY, SIGNAL_CHECK_MS)
            if rc == 0:
                return 0
            try:
                PyErr_CheckSignals()
            except BaseException:
                self._stop_blocking_stream()
                raise

    cdef void _resume(self):
        if self.engine.engine != NULL:
            rx_engine_resume(self.engine.engine, self.transfer)

    def feed(self, bytes data not None, bint block):
        """Append request body bytes (copied, GIL released, at most the engine's buffer limit
        at a time). True when all are taken; False when the transfer is over already (the
        server answered or it failed: stop feeding and fetch the result); None when there is
        no room yet (non-blocking only: the queue is notified when there is; call again with
        the same `data`, whose taken part is remembered)."""
        cdef rx_transfer *t = self._stream_transfer()
        cdef int resume = 0
        cdef long rc
        cdef const char *start = PyBytes_AS_STRING(data)
        cdef Py_ssize_t size = PyBytes_GET_SIZE(data)
        cdef Py_ssize_t offset = self.fed_offset if data is self.fed_chunk else 0
        while True:
            with nogil:
                rc = rx_upload_feed(t, start + offset, <size_t>(size - offset), not block,
                                    &resume)
            if resume:
                self._resume()
            if rc == RX_FEED_OVER:
                self.fed_chunk = None
                return False
            if rc == RX_FEED_NOMEM:
                self.fed_chunk = None
                self.close_stream()
                raise MemoryError("out of memory buffering the request body")
            offset += rc
            if offset >= size:
                self.fed_chunk = None
                return True
            if rc == 0:
                if not block:
                    self.fed_chunk, self.fed_offset = data, offset  # resumed by the next call
                    return None
                self._wait_stream(WAIT_ROOM)

    def end_body(self):
        """The fed body is complete."""
        cdef rx_transfer *t = self._stream_transfer()
        cdef int resume = 0
        rx_upload_end(t, &resume)
        if resume:
            self._resume()

    def finish(self):
        """For a blocking caller of a buffered response: wait for the transfer to end and
        return what perform() returns (or raise EngineError)."""
        cdef rx_transfer *t = self._stream_transfer()
        _wait_blocking(self.engine.engine, t)
        self._give_back_lane()
        return _take_result(t)

    cdef rx_transfer *_stream_transfer(self) except NULL:
        if self.transfer == NULL or not self.streaming:
            raise RuntimeError("not an open stream")
        return self.transfer

    def response_head(self, bint block):
        """(status, http_version, raw_header_block) once the final response's headers are in;
        None when they are not yet (non-blocking: the queue is notified when they are).
        Raises EngineError when the request failed first."""
        cdef rx_transfer *t = self._stream_transfer()
        if block:
            self._wait_stream(WAIT_HEADERS)
        elif not rx_stream_ready(t, 0, 1):
            return None
        cdef const rx_response *r = rx_transfer_response(t)
        if not r.headers_done:
            # Done without a response: the transfer failed (or was cancelled) before.
            if r.error == 0:
                raise EngineError(RX_E_CANCELLED, "the response ended before its headers")
            raise _transfer_failure(r)
        return (r.status, _http_version_of(t, r),
                PyBytes_FromStringAndSize(r.headers.data, r.headers.len), r.header_marks)

    def read_chunk(self, bint block):
        """The body bytes received since the last call: b"" at the end of the body, None when
        nothing has arrived yet (non-blocking only: the queue is notified when something
        does). Raises EngineError once the bytes before a failure have been handed out."""
        cdef rx_transfer *t = self._stream_transfer()
        cdef size_t size = 0
        cdef int resume = 0
        cdef char *data
        if self.eof:
            return b""
        while True:
            if block:
                self._wait_stream(WAIT_BODY)
            elif not rx_stream_ready(t, 1, 1):
                return None
            data = rx_stream_take(t, &size, &resume)
            if resume:
                self._resume()
            if data != NULL:
                try:
                    return PyBytes_FromStringAndSize(data, size)
                finally:
                    rx_buffer_free_stolen(data)
            if rx_transfer_is_delivered(t):
                break
        cdef const rx_response *r = rx_transfer_response(t)
        if r.error != 0:
            raise _transfer_failure(r)
        self.eof = True
        return b""

    @property
    def finished(self):
        """The loop thread is done with it (its result is in, or was taken)."""
        return self.transfer == NULL or rx_transfer_is_delivered(self.transfer)

    @property
    def elapsed(self):
        """Seconds from start to the end of the response (once done), else None."""
        if self.transfer == NULL or not rx_transfer_is_delivered(self.transfer):
            return None
        return rx_transfer_response(self.transfer).total_time_us / 1e6

    def close_stream(self):
        """The consumer is finished with it: stop the transfer if it still runs. A blocking
        stream waits (briefly) for the loop thread to let go, then releases everything."""
        if self.transfer == NULL:
            return
        if self.blocking:
            self._stop_blocking_stream()
            self.body = None
            rx_transfer_unref(self.transfer)
            self.transfer = NULL
            self._give_back_lane()
        else:
            self.cancel()


@cython.no_gc_clear
cdef class CompletionQueue:
    """Where one event loop receives finished transfers: `fileno()` becomes readable when the
    queue goes from empty to non-empty, and `drain()` returns every finished transfer at once.

    `pending` keeps each PendingTransfer (and the request body C borrows) alive until it has
    been drained, even if the coroutine that awaited it was cancelled long before."""

    def __cinit__(self):
        self.queue = rx_cq_new()
        if self.queue == NULL:
            raise MemoryError("cannot create a completion queue")
        self.pending = {}
        self.closed = False

    def __dealloc__(self):
        self.close()

    def fileno(self):
        if self.queue == NULL:
            raise ValueError("the completion queue is closed")
        return self.queue.notifier.read_end

    def __len__(self):
        return len(self.pending)

    def drain(self):
        """Every transfer finished since the last drain, as PendingTransfer objects."""
        cdef rx_transfer *t
        cdef rx_transfer *next_t
        cdef list done = []
        if self.queue == NULL:
            return done
        t = rx_cq_drain(self.queue)
        while t != NULL:
            next_t = rx_cq_collect(t)  # and t may be queued again: its state is read after
            if rx_transfer_is_delivered(t):
                pending = self.pending.pop(<size_t>t, None)
                if pending is not None and (<PendingTransfer>pending).engine.engine != NULL:
                    # A spin that gave up (try_spin) still teaches the spin its wait's length.
                    rx_engine_collected((<PendingTransfer>pending).engine.engine, t)
            else:
                pending = self.pending.get(<size_t>t)  # a stream with news, still running
            if pending is not None:
                done.append(pending)
            rx_transfer_unref(t)  # the queue's reference; PendingTransfer holds its own
            t = next_t
        return done

    def try_spin(self, PendingTransfer pending not None):
        """When `pending` is the only transfer in flight for this event loop, spin briefly (GIL
        released) in case it finishes within microseconds, as blocking waiters do; the event
        loop has nothing else of ours to do meanwhile. Returns the drained transfers (including
        `pending`) if it finished, else None (then await the queue as usual)."""
        cdef int done
        cdef rx_transfer *t = pending.transfer
        cdef rx_engine *e = pending.engine.engine
        if len(self.pending) != 1 or e == NULL or self.queue == NULL:
            return None
        with nogil:
            done = rx_engine_spin_wait(e, t)
        if not done:
            return None
        return self.drain()

    def close(self):
        """The event loop is going away: cancel what still runs, wait for the loop thread to
        let go of it (request bodies are borrowed), and release everything. Idempotent."""
        cdef PendingTransfer pending
        cdef rx_transfer *t
        if self.closed:
            return
        self.closed = True
        # Transfers inherited through fork() belong to the parent's loop thread, which does
        # not exist here: cancelling or waiting for them would wait for ever. Let go of them.
        live = [pending for pending in self.pending.values()
                if pending.engine.fork_generation == _fork_generation]
        for pending in live:
            pending.cancel()
        for pending in live:
            t = pending.transfer
            with nogil:
                rx_transfer_wait(t, -1)
        self.drain()
        self.pending.clear()
        if self.queue != NULL:
            rx_cq_close(self.queue)  # closes the notifier once no transfer points at it
            self.queue = NULL


@cython.final
cdef class LoadRun:
    """A load run under way (Engine.start_load). Its copies run on the engine's loop thread;
    this object only waits for the run, stops it and reads its figures."""
    cdef rx_load *run
    cdef Engine engine  # the engine runs it: kept alive until the run is freed
    cdef bytes body     # borrowed by the copies

    def wait(self, double timeout):
        """True once every copy has ended; False after `timeout` seconds (at most 50 ms at a
        time, so that the caller's signal handlers run between calls)."""
        cdef long timeout_ms = <long>(timeout * 1000)
        cdef int rc
        if timeout_ms > SIGNAL_CHECK_MS:
            timeout_ms = SIGNAL_CHECK_MS
        with nogil:
            rc = rx_load_wait(self.run, timeout_ms)
        return rc == 0

    def stop(self):
        """Start no further copies; those in flight end by themselves (or by their timeouts)."""
        rx_load_stop(self.run)

    def results(self):
        """{"completed", "non_2xx_3xx", "bytes", "latencies_us" (int64 native-endian bytes, one
        per answered request), "errors" ({code: count}), "first_error" (its text)}, once
        wait() has returned True."""
        cdef rx_load_results r
        cdef int i, rc
        with nogil:
            rc = rx_load_wait(self.run, 0)
        if rc != 0:
            raise RuntimeError("the load run has not finished")
        rx_load_results_of(self.run, &r)
        return {
            "completed": r.completed,
            "non_2xx_3xx": r.non_2xx_3xx,
            "bytes": r.bytes,
            "latencies_us": PyBytes_FromStringAndSize(<const char *>r.latencies_us,
                                                      r.completed * 8) if r.completed else b"",
            "errors": {r.error_codes[i]: r.error_counts[i] for i in range(r.error_kinds)},
            "first_error": r.first_error_text.decode(errors="replace"),
        }

    def __dealloc__(self):
        cdef rx_load *run = self.run
        self.run = NULL
        if run == NULL:
            return
        rx_load_stop(run)
        with nogil:  # the copies borrow the body: wait for the last one
            while rx_load_wait(run, 1000) != 0:
                pass
            rx_load_free(run)


cdef int _fill_request(rx_transfer *t, rx_request_options *options, bytes method, bytes url,
                       list headers, bytes body, tuple timeouts, int http_version,
                       TLSConfig tls, RouteConfig route) except -1:
    """Method, URL, headers, TLS settings and route set on `t`; body, timeouts and HTTP
    version written into `options` (the caller sets the rest and hands them over)."""
    cdef object entry, name, value
    _check(rx_transfer_set_method(t, PyBytes_AS_STRING(method), PyBytes_GET_SIZE(method)))
    _check(rx_transfer_set_url(t, PyBytes_AS_STRING(url), PyBytes_GET_SIZE(url)))
    for entry in headers:
        # (name, value) pairs, or the models' (name, lower_name, value) entries as they are.
        name = entry[0]
        value = entry[len(entry) - 1]  # no negative indexing: wraparound is off in this module
        if type(name) is not bytes or type(value) is not bytes:
            raise TypeError(f"header names and values must be bytes, got {entry!r}")
        _check(rx_transfer_add_header(t, PyBytes_AS_STRING(name), PyBytes_GET_SIZE(name),
                                      PyBytes_AS_STRING(value), PyBytes_GET_SIZE(value)))
    if body is not None:
        # Borrowed: the caller's reference keeps the bytes alive until the transfer is done.
        options.body = PyBytes_AS_STRING(body)
        options.body_len = PyBytes_GET_SIZE(body)
        options.has_body = 1
    else:
        options.body = NULL
        options.body_len = 0
        options.has_body = 0
    options.connect_timeout_ms = timeouts[0]
    options.read_timeout_ms = timeouts[1]
    options.write_timeout_ms = timeouts[2]
    options.pool_timeout_ms = timeouts[3]
    options.total_timeout_ms = timeouts[4] if len(timeouts) > 4 else -1
    options.http_version = http_version
    if tls is not None:
        rx_transfer_set_tls(t, tls.tls)
    if route is not None:
        rx_transfer_set_route(t, route.route)
    return 0


cdef int _wait_blocking(rx_engine *e, rx_transfer *t, bint signals_first=False) except -1:
    """Wait for completion with the GIL released, staying responsive to Ctrl-C.

    A short bounded spin comes first (rx_engine_spin_wait): for nearby servers the answer
    often arrives sooner than a sleep and wake-up would take.

    The latch wait ends early on EINTR (Linux) or after SIGNAL_CHECK_MS; either way Python gets to
    run its signal handlers. If one raises, the transfer is cancelled and we wait for the loop
    thread to let go of it (the request body is borrowed) before the exception propagates.
    signals_first: handlers run before the first wait too (a drive that a signal ended: the
    signal has arrived already, and would otherwise wait out a whole slice)."""
    cdef int rc
    if signals_first:
        _check_signals(e, t)
    with nogil:
        rc = rx_engine_spin_wait(e, t)
        if rc:
            rx_gil_wait_free()  # gil_probe.h
    if rc:
        return 0
    while True:
        with nogil:
            rc = rx_transfer_wait(t, SIGNAL_CHECK_MS)
            if rc == 0:
                rx_gil_wait_free()
        if rc == 0:
            rx_engine_collected(e, t)
            return 0
        _check_signals(e, t)


cdef int _check_signals(rx_engine *e, rx_transfer *t) except -1:
    """Run Python's signal handlers; if one raises, cancel `t` and wait until the loop thread
    has let go of it (its request body is borrowed) before the exception propagates."""
    try:
        PyErr_CheckSignals()
    except BaseException:
        with nogil:
            rx_engine_cancel(e, t)
            rx_transfer_wait(t, -1)
        raise
    return 0


cdef tuple _take_result(rx_transfer *t):
    cdef const rx_response *r = rx_transfer_response(t)
    if r.error != 0:
        raise _transfer_failure(r)
    cdef Body body = Body.__new__(Body)
    cdef size_t size = 0
    body.data = rx_transfer_take_body(t, &size)
    body.size = <Py_ssize_t>size
    raw_headers = PyBytes_FromStringAndSize(r.headers.data, r.headers.len)
    return (r.status, _http_version_of(t, r), raw_headers, body, r.total_time_us / 1e6,
            r.header_marks)


# "HTTP/1.1" and friends, made once per protocol version rather than decoded per response.
cdef dict _http_version_names = {}


cdef str _http_version_of(rx_transfer *t, const rx_response *r):
    name = _http_version_names.get(r.http_version_used)
    if name is None:
        name = rx_transfer_http_version(t).decode("ascii")
        _http_version_names[r.http_version_used] = name
    return name


def _select_platform():
    """Pick the platform layer's implementation (csrc/platform.h) before any engine starts:
    this build's own, or the one REQUESTX_PLATFORM names ("posix" runs the portable one on
    Linux, as macOS and the BSDs do)."""
    cdef char names[128]
    wanted = os.environ.get("REQUESTX_PLATFORM", "")
    if rx_platform_select(wanted.encode(), names, sizeof(names)) != 0:
        raise ImportError(
            f"REQUESTX_PLATFORM={wanted!r}: this build of requestx has "
            f"{names.decode()} (unset the variable for the default)"
        )

_select_platform()


def platform_info():
    """The platform layer in use: {"platform": its name}."""
    return {"platform": rx_platform_name().decode()}


# Blocking callers look at the GIL before they take it back (gil_probe.h). Found once, here,
# while the import holds the GIL.
rx_gil_probe_init()


def gil_probe_stats():
    """The GIL probe (gil_probe.h): whether it is on in this interpreter, and what blocking
    callers did on finding the GIL held after a wait, counted for the whole process: `spins`
    ended with the GIL free; `busy` gave up after the spin's limit while other threads had
    the GIL in turn, `timeouts` while one thread kept it; `skipped` took the GIL without
    spinning while backing off from timeouts."""
    cdef rx_gil_stats s
    rx_gil_get_stats(&s)
    return {"on": bool(rx_gil_probe_on()), "spins": s.spins, "busy": s.busy,
            "timeouts": s.timeouts, "skipped": s.skipped}


def gil_probe_layout_known():
    """Whether this build knows the GIL's layout (compiled with the interpreter's internal
    headers, a version it checked): the probe is on where it does and the check at import
    agrees (gil_probe.c)."""
    return bool(rx_gil_probe_layout_known())


def gil_held_while_released(unsigned int wait_us=0):
    """What the GIL probe reads from a section that has released the GIL, `wait_us` after
    releasing it: False unless another Python thread took it meanwhile (a test of the probe)."""
    cdef int held
    with nogil:
        if wait_us:
            rx_sleep_us(wait_us)
        held = rx_gil_held()
    return bool(held)


def gil_held():
    """What the GIL probe reads now, with the GIL held: True whenever the probe is on."""
    return bool(rx_gil_held())


def live_transfers():
    """Transfers alive in this process (tests assert it returns to zero)."""
    return rx_transfer_live_count()


def live_objects():
    """The engine's C objects alive in this process: transfers, libcurl easy handles (pooled
    ones included) and buffers (response bodies held by Body objects included). Every count
    is back to zero once all clients, responses and streams are gone (the test suite checks
    it at the end of the run)."""
    return {"transfers": rx_transfer_live_count(),
            "easy_handles": rx_engine_live_easy_handles(),
            "buffers": rx_buffer_live_count(),
            "decoders": rx_decoder_live_count()}
