"""atheris target: `requestx.URL`, compared with httpx's parser on the same text.

Input: the URL as UTF-8 (invalid bytes replaced), optionally a newline and a reference
to join against it. Properties:

* `URL(text)` returns or raises `InvalidURL`, nothing else; so does `join`, and a URL
  joined to an absolute base reads back as itself.
* the fast path (one regular expression) and the general parser agree (`_urls.py`).
* the normal form is stable: `URL(str(url))` has the same components.
* httpx 0.28 accepts and refuses the same texts and gives the same components, except
  for the differences docs/differences.md allows (`_allowed_*` below, each pointing at
  its line there). Where httpx itself fails with something other than `InvalidURL`
  (its IDNA code lets `UnicodeError` out), there is nothing to compare.
"""

from __future__ import annotations

import re

from _target import Finding, atheris, check, run

with atheris.instrument_imports(include=["requestx"]):
    import requestx
    from requestx import _urls

import httpx
from httpx import _urlparse as httpx_urlparse

_DEFAULT_PORTS = {"http": 80, "https": 443, "ws": 80, "wss": 443, "ftp": 21}
# RFC 3986 section 3.2.2: reg-name = *( unreserved / pct-encoded / sub-delims )
_REG_NAME = re.compile(r"[A-Za-z0-9\-._~!$&'()*+,;=%]*").fullmatch
# RFC 6874: IPv6address [ "%25" ZoneID ], ZoneID = 1*( unreserved / pct-encoded )
_IPV6_LITERAL = re.compile(r"[0-9A-Fa-f:.]*(%[A-Za-z0-9\-._~%]*)?").fullmatch


def _raw_parts(text: str) -> tuple[str, str, str, str | None, str]:
    """scheme, userinfo, host, port, path as written, split as httpx splits them; the port
    with the colon before it, if there is one."""
    url = httpx_urlparse.URL_REGEX.match(text)
    assert url is not None
    authority = httpx_urlparse.AUTHORITY_REGEX.match(url["authority"] or "")
    assert authority is not None
    port = authority["port"]
    if port is not None:
        port = authority.string[authority.end("host") : authority.end("port")]
    return (
        url["scheme"] or "",
        authority["userinfo"] or "",
        authority["host"] or "",
        port,
        url["path"] or "",
    )


def _allowed_refusal(text: str) -> bool:
    """requestx refuses what httpx accepts: allowed by docs/differences.md, "Stricter
    input", for a port that is not 1 to 5 ASCII digits in 0-65535, and for characters not
    allowed in a host name (httpx percent-encodes them)."""
    _, _, host, port, _ = _raw_parts(text)
    # ... and a port not separated from the host by a colon (`[::1]80`, which httpx reads
    # as port 80).
    if port and not port.startswith(":"):
        return True
    port = port[1:] if port else port
    if port and not (port.isascii() and port.isdigit() and int(port) <= 65535 and len(port) <= 5):
        return True
    if host.isascii() and not host.startswith("[") and not _REG_NAME(host):
        return True
    # ... in an IPv6 literal's zone id too (RFC 6874: unreserved characters and escapes),
    # which httpx passes on whatever it holds (`[::1%eth 0]`).
    if host.startswith("[") and host.endswith("]") and not _IPV6_LITERAL(host[1:-1]):
        return True
    return host.startswith("[") and not host.endswith("]")


def _dot_segment_ending(text: str) -> bool:
    """docs/differences.md, "URL details": dot segments follow RFC 3986 exactly, so a path
    ending in "." or ".." keeps its final slash (`/a/b/..` is `/a/`; httpx: `/a`)."""
    path = _raw_parts(text)[4]
    return path.split("/")[-1] in (".", "..")


def _compare(text: str, ours: requestx.URL, theirs: httpx.URL) -> None:
    scheme = _raw_parts(text)[0].lower()
    excused = False
    # docs/differences.md, "URL details": default ports are recognised after lower-casing
    # the scheme (`HTTP://a:80/` equals `http://a/`); httpx looks them up as written.
    if ours.port is None and theirs.port is not None and theirs.port == _DEFAULT_PORTS.get(scheme):
        excused = True
    else:
        check(ours.port == theirs.port, "port differs from httpx", text, ours, theirs)
    ours_path, theirs_path = ours._path, theirs._uri_reference.path
    if ours_path != theirs_path:
        ok = _dot_segment_ending(text) and ours_path == theirs_path + "/"
        check(ok, "path differs from httpx", text, ours_path, theirs_path)
        excused = True
    for name in ("scheme", "raw_scheme", "userinfo", "username", "password", "raw_host"):
        check(getattr(ours, name) == getattr(theirs, name), f"{name} differs from httpx", text)
    for name in ("query", "fragment", "is_absolute_url", "is_relative_url"):
        check(getattr(ours, name) == getattr(theirs, name), f"{name} differs from httpx", text)
    # docs/differences.md, "URL details": URL.host decodes every punycode label; httpx only
    # a host that starts with one.
    if b"xn--" not in ours.raw_host:
        check(ours.host == theirs.host, "host differs from httpx", text, ours.host, theirs.host)
    # docs/differences.md, "URL details": QueryParams keep the order they were given in;
    # httpx groups them by name. The values of one name keep their order in both.
    ours_params = sorted(ours.params.multi_items(), key=lambda item: item[0])
    theirs_params = sorted(theirs.params.multi_items(), key=lambda item: item[0])
    check(ours_params == theirs_params, "query parameters differ from httpx", text)
    if not excused:
        check(str(ours) == str(theirs), "str() differs from httpx", text, str(ours), str(theirs))
        check(ours.netloc == theirs.netloc, "netloc differs from httpx", text)


def _written_unambiguously(url: requestx.URL) -> bool:
    """Whether str(url) is expected to read back as url. Two shapes do not, in requestx as
    in httpx 0.28 (reported in fuzz/README.md): a relative URL whose path's first segment
    holds a colon (`:a:b` is the path `a:b`, written `a:b`, read back as scheme `a`; RFC 3986
    section 4.2 forbids writing it so), and an empty authority before a path that starts
    with "//" (`p:////x`, written `p://x`, read back with the host `x`)."""
    if not url.scheme and not url.netloc and ":" in url._path.split("/")[0]:
        return False
    return bool(url.netloc) or not url._path.startswith("//")


def _parse(text: str) -> requestx.URL | None:
    try:
        return requestx.URL(text)
    except requestx.InvalidURL:
        return None


def test_one_input(data: bytes) -> None:
    text, _, reference = data.decode("utf-8", "replace").partition("\n")
    ours = _parse(text)

    # The fast path and the general parser.
    try:
        general: tuple[object, ...] | None = _urls._parse(text, {})
    except requestx.InvalidURL:
        general = None
    check(
        (ours._parts() if ours is not None else None) == general,
        "the fast path and the general parser disagree",
        text,
    )
    if ours is not None and general is not None:
        written = str(requestx.URL._from_parts(*general))  # type: ignore[arg-type]
        check(str(ours) == written, "str() differs between the two paths", text, str(ours))

    if ours is not None and _written_unambiguously(ours):
        again = requestx.URL(str(ours))
        check(again._parts() == ours._parts(), "URL(str(url)) differs from url", text, again)
        check(again == ours and hash(again) == hash(ours), "equal URLs compare unequal", text)
        repr(ours)
        # RFC 3986 section 5.2 resolves against an absolute base only: against a relative
        # one, `URL("").join("./a:b")` gives a path `a:b` that reads back as scheme `a`.
        if reference and ours.is_absolute_url:
            ref = _parse(reference)
            if ref is not None:
                joined = ours.join(ref)
                if _written_unambiguously(joined):
                    again = requestx.URL(str(joined))
                    check(again._parts() == joined._parts(), "a joined URL is not stable", text)

    try:
        theirs = httpx.URL(text)
    except httpx.InvalidURL:
        theirs = None
    except Exception:
        return  # httpx's own failure (UnicodeError from its IDNA code): nothing to compare
    if ours is None and theirs is not None:
        check(_allowed_refusal(text), "InvalidURL where httpx accepts the URL", text, theirs)
    elif ours is not None and theirs is None:
        raise Finding(f"accepted where httpx raises InvalidURL\n  {text!r}\n  {ours!r}")
    elif ours is not None and theirs is not None:
        _compare(text, ours, theirs)


if __name__ == "__main__":
    run(test_one_input)
