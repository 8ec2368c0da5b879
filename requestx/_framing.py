"""A request's framing headers, checked before any byte goes out.

Content-Length and Transfer-Encoding tell the server where the request body ends. A value
that disagrees with the body actually sent makes the server read the rest of the body as the
next request on the connection (request smuggling), or wait for bytes that never come. So a
caller-supplied framing header must describe the body exactly:

* Content-Length: only ASCII digits (no sign, no spaces inside, RFC 9110 section 8.6), every
  copy the same, and equal to the body's length when the body is in memory. (A streamed body
  is counted as it is fed, `_streams._LengthCheck`.)
* Transfer-Encoding: only `chunked` (the one coding requestx frames), and never together with
  Content-Length (RFC 9112 section 6.2: a sender MUST NOT send both).

Anything else raises `LocalProtocolError` naming the header; the connection pool is untouched.
"""

from __future__ import annotations

import typing

from ._exceptions import LocalProtocolError

if typing.TYPE_CHECKING:
    from ._models import Request

# The request header fields that frame a body (lower-cased, as Headers keeps them): the ones
# checked here, and the ones the client decides unless the caller sets them.
CONTENT_LENGTH = b"content-length"
TRANSFER_ENCODING = b"transfer-encoding"
FRAMING_FIELDS = frozenset({CONTENT_LENGTH, TRANSFER_ENCODING})
# The methods whose request without a body says so with `Content-Length: 0`
# (`_default_headers.add_default_headers`) and whose empty body is still sent as one.
METHODS_WITH_BODY = frozenset({"POST", "PUT", "PATCH"})


def parse_content_length(value: bytes | str) -> int | None:
    """The value of a Content-Length header, or None when it is not a plain decimal number."""
    text = value.decode("latin-1") if isinstance(value, bytes) else value
    text = text.strip(" \t")
    if not text or not text.isdigit() or not text.isascii():
        return None
    return int(text)


def check_request_framing(request: Request) -> None:
    """Raise LocalProtocolError unless the request's framing headers match its body."""
    lengths: list[bytes] = []
    codings: list[bytes] = []
    for _, lower, value in request.headers._entries():
        if lower == CONTENT_LENGTH:
            lengths.append(value)
        elif lower == TRANSFER_ENCODING:
            codings.append(value)
    if not lengths and not codings:
        return
    if lengths and codings:
        raise LocalProtocolError(
            "A request may not carry both Content-Length and Transfer-Encoding "
            "(RFC 9112 section 6.2)",
            request=request,
        )
    if codings:
        coding = b",".join(codings).strip(b" \t").lower()
        if coding != b"chunked":
            raise LocalProtocolError(
                f"Unsupported request Transfer-Encoding {b', '.join(codings).decode('latin-1')!r}"
                ": requestx frames request bodies with 'chunked' only",
                request=request,
            )
        return
    length = parse_content_length(lengths[0])
    if length is None or any(value.strip(b" \t") != lengths[0].strip(b" \t") for value in lengths):
        shown = ", ".join(value.decode("latin-1") for value in lengths)
        raise LocalProtocolError(f"Invalid request Content-Length {shown!r}", request=request)
    body = request._content
    if body is not None and length != len(body):
        raise LocalProtocolError(
            f"The request's Content-Length ({length}) does not match its body ({len(body)} bytes)",
            request=request,
        )
