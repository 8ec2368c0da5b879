"""atheris target: multipart/form-data encoding (`requestx/_multipart.py`), compared with httpx.

Input: a FuzzedDataProvider's choice of form fields (str, bytes, int, float, bool, None and
lists of them, under any names) and files (bytes, str or a file object at position 0, alone
or as a (filename, content[, content_type[, headers]]) tuple), and a boundary. The same
`Request("POST", ..., data=..., files=...)` is built by requestx and by httpx with that
boundary in its Content-Type. Properties:

* requestx raises only what httpx raises for the same arguments (TypeError, ValueError);
* the body and its headers (Content-Type, Content-Length) are byte for byte httpx's;
* Content-Length is the length of the body the stream yields, every time it is iterated.
"""

from __future__ import annotations

import io

from _target import atheris, check, run

with atheris.instrument_imports(include=["requestx"]):
    import requestx

import httpx


def _value(fdp: atheris.FuzzedDataProvider) -> object:
    kind = fdp.ConsumeIntInRange(0, 6)
    if kind == 0:
        return fdp.ConsumeUnicodeNoSurrogates(12)
    if kind == 1:
        return fdp.ConsumeBytes(12)
    if kind == 2:
        return fdp.ConsumeIntInRange(-1000, 1000)
    if kind == 3:
        return fdp.ConsumeFloat()
    if kind == 4:
        return fdp.ConsumeBool()
    if kind == 5:
        return None
    return [_value(fdp) for _ in range(fdp.ConsumeIntInRange(0, 2)) if fdp.remaining_bytes()]


def _file(fdp: atheris.FuzzedDataProvider) -> tuple[object, object]:
    """The same file value twice: one for each client (a file object is read by both)."""
    kind = fdp.ConsumeIntInRange(0, 4)
    content = fdp.ConsumeBytes(fdp.ConsumeIntInRange(0, 64))
    if kind == 0:
        return content, content
    if kind == 1:
        return io.BytesIO(content), io.BytesIO(content)
    filename = fdp.ConsumeUnicodeNoSurrogates(10) if fdp.ConsumeBool() else None
    if kind == 2:
        return (filename, content), (filename, content)
    content_type = fdp.ConsumeUnicodeNoSurrogates(10) if fdp.ConsumeBool() else None
    if kind == 3:
        return (filename, content, content_type), (filename, content, content_type)
    headers = {fdp.ConsumeUnicodeNoSurrogates(6): fdp.ConsumeUnicodeNoSurrogates(6)}
    return (
        (filename, io.BytesIO(content), content_type, headers),
        (filename, io.BytesIO(content), content_type, dict(headers)),
    )


def _build(module: object, data: dict, files: list, boundary: str) -> object:
    content_type = f"multipart/form-data; boundary={boundary}"
    try:
        request = module.Request(  # type: ignore[attr-defined]
            "POST", "http://example.org/", data=data, files=files,
            headers={"Content-Type": content_type},
        )  # fmt: skip
        return request, request.read()
    except (TypeError, ValueError, UnicodeEncodeError) as exc:
        return type(exc).__name__


def test_one_input(data: bytes) -> None:
    fdp = atheris.FuzzedDataProvider(data)
    boundary = fdp.ConsumeString(fdp.ConsumeIntInRange(1, 20)).strip() or "B"
    if not boundary.isascii() or not boundary.isprintable() or ";" in boundary:
        boundary = "B"
    fields = {
        fdp.ConsumeUnicodeNoSurrogates(8): _value(fdp) for _ in range(fdp.ConsumeIntInRange(0, 3))
    }
    ours_files, theirs_files = [], []
    for _ in range(fdp.ConsumeIntInRange(0, 3)):
        name = fdp.ConsumeUnicodeNoSurrogates(8)
        ours, theirs = _file(fdp)
        ours_files.append((name, ours))
        theirs_files.append((name, theirs))
    if not fields and not ours_files:
        return
    ours = _build(requestx, fields, ours_files, boundary)
    theirs = _build(httpx, fields, theirs_files, boundary)
    what = (boundary, fields, ours_files)
    if isinstance(ours, str) or isinstance(theirs, str):
        check(isinstance(ours, str), "accepted where httpx raises", what, theirs)
        check(isinstance(theirs, str), "raises where httpx accepts", what, ours)
        return
    (our_request, our_body), (their_request, their_body) = ours, theirs
    check(our_body == their_body, "the body differs from httpx's", what, our_body, their_body)
    for name in ("Content-Type", "Content-Length", "Transfer-Encoding"):
        got, want = our_request.headers.get(name), their_request.headers.get(name)
        check(got == want, f"{name} differs from httpx's", what, got, want)
    length = our_request.headers.get("Content-Length")
    for _ in range(2):
        body = b"".join(our_request.stream)
        check(body == our_body, "iterating again gives another body", what)
        check(length is None or int(length) == len(body), "Content-Length is wrong", what)


if __name__ == "__main__":
    run(test_one_input)
