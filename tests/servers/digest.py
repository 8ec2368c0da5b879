"""The server side of HTTP Digest (RFC 7616) for the test app, written independently of
requestx's client side so that a shared mistake cannot make the two agree.

    /digest-auth/{qop}/{algorithm}    qop: auth, auth-int or none; algorithm: MD5, SHA-256,
                                      SHA-512, each optionally with -sess. User "user",
                                      password "passwd". 401 with a challenge until the
                                      Authorization header checks out, then 200 with JSON.
"""

from __future__ import annotations

import hashlib
import re

USER, PASSWORD, REALM, NONCE, OPAQUE = "user", "passwd", "requestx-tests", "dcd98b7102dd2f0e", "5c"

_FIELD = re.compile(r'(\w+)=(?:"([^"]*)"|([^\s,]+))')


def challenge(qop: str, algorithm: str) -> bytes:
    qop_field = "" if qop == "none" else f', qop="{qop}"'
    return (
        f'Digest realm="{REALM}", nonce="{NONCE}", opaque="{OPAQUE}", '
        f"algorithm={algorithm}{qop_field}"
    ).encode()


def verify(authorization: str, method: str, body: bytes, qop: str, algorithm: str) -> bool:
    if not authorization.startswith("Digest "):
        return False
    fields = {m[0]: m[1] if m[1] else m[2] for m in _FIELD.findall(authorization[7:])}
    name = algorithm.upper()
    hash_name = {"MD5": "md5", "SHA-256": "sha256", "SHA-512": "sha512"}[name.replace("-SESS", "")]

    def h(text: str) -> str:
        return hashlib.new(hash_name, text.encode("latin-1")).hexdigest()

    if fields.get("username") != USER or fields.get("nonce") != NONCE:
        return False
    if fields.get("realm") != REALM or fields.get("opaque") != OPAQUE:
        return False
    ha1 = h(f"{USER}:{REALM}:{PASSWORD}")
    if name.endswith("-SESS"):
        ha1 = h(f"{ha1}:{NONCE}:{fields.get('cnonce', '')}")
    uri = fields.get("uri", "")
    if qop == "auth-int":
        body_hash = hashlib.new(hash_name, body).hexdigest()
        ha2 = h(f"{method}:{uri}:{body_hash}")
    else:
        ha2 = h(f"{method}:{uri}")
    if qop == "none":
        expected = h(f"{ha1}:{NONCE}:{ha2}")
    else:
        if fields.get("qop") != qop:
            return False
        expected = h(f"{ha1}:{NONCE}:{fields.get('nc')}:{fields.get('cnonce')}:{qop}:{ha2}")
    return fields.get("response") == expected
