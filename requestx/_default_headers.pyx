"""The header fields a request gets that its caller did not give: Host first, then the body's
framing (Content-Length or Transfer-Encoding, and its Content-Type), and `Content-Length: 0`
for a POST, PUT or PATCH without a body, so the server knows there is none.

One rule for every request. `Request.__init__` applies it to the headers it was given, and
the plain path (`_hotpath.plain_request`) to a copy of its client's default headers; it is
compiled because the plain path builds a request without running Python code.
"""

from ._framing import CONTENT_LENGTH as _CONTENT_LENGTH
from ._framing import METHODS_WITH_BODY as _METHODS_WITH_BODY
from ._framing import TRANSFER_ENCODING as _TRANSFER_ENCODING

cdef bytes CONTENT_LENGTH = _CONTENT_LENGTH
cdef bytes TRANSFER_ENCODING = _TRANSFER_ENCODING
cdef bytes HOST = b"host"
cdef frozenset METHODS_WITH_BODY = _METHODS_WITH_BODY
cdef tuple EMPTY_CONTENT_LENGTH = (b"Content-Length", CONTENT_LENGTH, b"0")


cpdef add_default_headers(list entries, method, url, body_headers):
    """Add to `entries` (a `Headers`' own list of (name, lower-cased name, value)) what the
    request to `url` needs and was not given. From `body_headers` (the encoded body's
    (name, value) pairs), those not set already; an explicit Content-Length wins over a
    computed chunked coding and an explicit Transfer-Encoding over a computed length."""
    for name, value in body_headers:
        lower = name.lower()
        if lower == TRANSFER_ENCODING and _has(entries, CONTENT_LENGTH):
            continue
        if lower == CONTENT_LENGTH and _has(entries, TRANSFER_ENCODING):
            continue
        if not _has(entries, lower):
            entries.append((name, lower, value))
    cdef Py_ssize_t host_offset = 0
    if url._host and not _has(entries, HOST):
        host = url._host_entry_cache
        if host is None:
            host = url._host_entry()
        entries.insert(0, host)
        host_offset = 1
    if (
        method in METHODS_WITH_BODY
        and not _has(entries, CONTENT_LENGTH)
        and not _has(entries, TRANSFER_ENCODING)
    ):
        entries.insert(host_offset, EMPTY_CONTENT_LENGTH)


cdef bint _has(list entries, bytes lower) except -1:
    """Whether `entries` has a field named `lower` (lower-cased)."""
    cdef bytes name
    for entry in entries:
        name = <bytes>(<tuple>entry)[1]  # bytes == bytes: compared in C, without a call
        if name == lower:
            return True
    return False
