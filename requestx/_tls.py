"""
What httpx's `verify=`, `cert=` and `trust_env` mean, turned into the engine's TLS settings.

The trust store, in order:

1. `verify=False`: no verification at all (neither the chain nor the host name).
2. `verify=<path>`: that CA bundle file, or that directory of hashed CA certificates, and
   nothing else.
3. `verify=<ssl.SSLContext>`: its verify mode, its host-name check, its minimum and maximum
   TLS versions and its CA certificates (or the system store, when it holds none explicitly,
   as `ssl.create_default_context()` does). See `from_ssl_context` for what cannot be taken.
4. `verify=True` (the default): with `trust_env`, the file in `SSL_CERT_FILE` and the
   directory in `SSL_CERT_DIR` when set; otherwise the system store libcurl was built with
   (on Debian `/etc/ssl/certs`), which is what the operating system's administrators maintain
   and corporate CAs are added to; when that store is missing (a wheel built on another
   distribution), the first of the usual distribution locations that exists. Only when none
   does is certifi's bundle used (httpx always uses certifi; `docs/differences.md`).

Settings are built once per client configuration and shared by its transfers; the default
one is cached, so constructing a client costs no file access.
"""

from __future__ import annotations

import os
import ssl
import typing

from . import _core

__all__ = ["create_ssl_context", "tls_config"]

# CURL_SSLVERSION_* (minimum) and CURL_SSLVERSION_MAX_* (maximum) from curl/curl.h.
_MIN_VERSION = {
    ssl.TLSVersion.TLSv1: 4,
    ssl.TLSVersion.TLSv1_1: 5,
    ssl.TLSVersion.TLSv1_2: 6,
    ssl.TLSVersion.TLSv1_3: 7,
}
_MAX_VERSION = {
    ssl.TLSVersion.TLSv1: 4 << 16,
    ssl.TLSVersion.TLSv1_1: 5 << 16,
    ssl.TLSVersion.TLSv1_2: 6 << 16,
    ssl.TLSVersion.TLSv1_3: 7 << 16,
}

_default_config: _core.TLSConfig | None = None


def tls_config(verify: typing.Any, cert: typing.Any, trust_env: bool) -> _core.TLSConfig | None:
    """The engine's TLS settings for a client; None means libcurl's defaults (verification on,
    the system store)."""
    if cert is not None:
        return _with_client_cert(verify, cert, trust_env)
    if verify is True:
        return _default_verification(trust_env)
    if verify is False:
        return _core.TLSConfig(verify_peer=False, verify_host=False)
    if isinstance(verify, ssl.SSLContext):
        return from_ssl_context(verify)
    if isinstance(verify, (str, os.PathLike)):
        return _from_path(os.fspath(verify))
    raise TypeError(
        "verify must be True, False, an ssl.SSLContext or the path of a CA bundle file or "
        f"directory, not {type(verify).__name__}"
    )


def create_ssl_context(
    verify: ssl.SSLContext | str | bool = True,
    cert: typing.Any = None,
    trust_env: bool = True,
) -> ssl.SSLContext:
    """
    An `ssl.SSLContext` that trusts what `verify=` trusts in a client (httpx's function, for
    `verify=create_ssl_context()` and for `Proxy(ssl_context=...)`): verification on with the
    same store the engine uses (SSL_CERT_FILE / SSL_CERT_DIR with trust_env, else the system
    store, else certifi's), off for `False`, a CA file or directory for a path. `cert`: a
    client certificate file, or (file, key) or (file, key, password).

        >>> context = create_ssl_context()
        >>> context.load_verify_locations(cafile="internal-ca.pem")
        >>> client = requestx.Client(verify=context)
    """
    if verify is True:
        cafile, capath = _default_locations(trust_env)
        context = ssl.create_default_context(cafile=cafile, capath=capath)
    elif verify is False:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    elif isinstance(verify, ssl.SSLContext):
        context = verify
    elif isinstance(verify, (str, os.PathLike)):
        path = os.fspath(verify)
        if os.path.isdir(path):
            context = ssl.create_default_context(capath=path)
        else:
            context = ssl.create_default_context(cafile=path)
    else:
        raise TypeError(
            "verify must be True, False, an ssl.SSLContext or the path of a CA bundle file or "
            f"directory, not {type(verify).__name__}"
        )
    if cert:
        if isinstance(cert, (str, os.PathLike)):
            context.load_cert_chain(cert)
        else:
            context.load_cert_chain(*cert)
    return context


def _default_locations(trust_env: bool) -> tuple[str | None, str | None]:
    """(cafile, capath) for `verify=True`: the engine's default store."""
    config = _default_verification(trust_env)
    if config is None:
        return None, None
    fields = config.fields()
    if not (fields["ca_file"] or fields["ca_path"]):  # libcurl's own store, as it was built
        return _core.LIBCURL_CAINFO, _core.LIBCURL_CAPATH
    cafile = os.fsdecode(fields["ca_file"]) if fields["ca_file"] else None
    capath = os.fsdecode(fields["ca_path"]) if fields["ca_path"] else None
    return cafile, capath


def _default_verification(trust_env: bool) -> _core.TLSConfig | None:
    if trust_env:
        cert_file = os.environ.get("SSL_CERT_FILE")
        cert_dir = os.environ.get("SSL_CERT_DIR")
        if (cert_file and os.path.isfile(cert_file)) or (cert_dir and os.path.isdir(cert_dir)):
            return _core.TLSConfig(
                ca_file=os.fsencode(cert_file) if cert_file and os.path.isfile(cert_file) else None,
                ca_path=os.fsencode(cert_dir) if cert_dir and os.path.isdir(cert_dir) else None,
            )
    global _default_config
    if _default_config is None:
        _default_config = _system_store_or_certifi()
    return _default_config


# Where Linux distributions keep their CA store: bundle files, then hashed directories. The
# libcurl inside a wheel has the store of the machine it was built on compiled in (AlmaLinux's
# /etc/pki/tls/certs/ca-bundle.crt for manylinux), which the machine it runs on may not have;
# and a compiled-in bundle that is missing fails every request (CURLE_SSL_CACERT_BADFILE) even
# when the compiled-in directory exists.
_SYSTEM_CA_FILES = (
    "/etc/ssl/certs/ca-certificates.crt",  # Debian, Ubuntu, Arch, Gentoo
    "/etc/pki/tls/certs/ca-bundle.crt",  # Fedora, RHEL, AlmaLinux
    "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem",  # RHEL 7 and later
    "/etc/ssl/ca-bundle.pem",  # openSUSE
    "/etc/ssl/cert.pem",  # Alpine
)
_SYSTEM_CA_DIRS = ("/etc/ssl/certs", "/etc/pki/tls/certs")


# Schannel (the Windows build's TLS) verifies against the Windows certificate store when it is
# given no CA file: the store a machine's administrators add their CAs to, so that is the
# default there, never a bundle file.
_VERIFIES_WITH_OS_STORE = (_core.libcurl_info()["ssl"] or "").startswith("Schannel")


def _system_store_or_certifi() -> _core.TLSConfig:
    if _VERIFIES_WITH_OS_STORE:
        return _core.TLSConfig()
    cainfo, capath = _core.LIBCURL_CAINFO, _core.LIBCURL_CAPATH
    file_ok = bool(cainfo) and os.path.isfile(cainfo or "")
    dir_ok = bool(capath) and os.path.isdir(capath or "")
    if (file_ok or dir_ok) and (file_ok or not cainfo) and (dir_ok or not capath):
        return _core.TLSConfig()  # libcurl's own store, as it was built
    found_file = next((f for f in (cainfo, *_SYSTEM_CA_FILES) if f and os.path.isfile(f)), None)
    found_dir = next((d for d in (capath, *_SYSTEM_CA_DIRS) if d and os.path.isdir(d)), None)
    if found_file or found_dir:
        return _core.TLSConfig(
            ca_file=os.fsencode(found_file) if found_file else None,
            ca_path=os.fsencode(found_dir) if found_dir else None,
        )
    try:
        import certifi
    except ImportError:
        raise ssl.SSLError(
            "No CA certificates to verify servers with: libcurl has no system store "
            f"({cainfo or capath or 'none configured'}), none was found where Linux "
            "distributions keep theirs, and certifi is not installed. Install certifi, or "
            "pass verify=<CA bundle path>."
        ) from None
    return _core.TLSConfig(ca_file=os.fsencode(certifi.where()))


def _from_path(path: str) -> _core.TLSConfig:
    if os.path.isfile(path):
        return _core.TLSConfig(ca_file=os.fsencode(path))
    if os.path.isdir(path):
        return _core.TLSConfig(ca_path=os.fsencode(path))
    raise OSError(f"Could not find a suitable TLS CA certificate bundle, invalid path: {path}")


def from_ssl_context(context: ssl.SSLContext) -> _core.TLSConfig:
    """
    The settings an `ssl.SSLContext` carries that libcurl can apply: verify mode, host-name
    check, minimum/maximum TLS version and the CA certificates it holds.

    libcurl builds its own OpenSSL context, so what Python keeps inside an SSLContext without
    a way to read it back cannot be carried over: a client certificate loaded with
    `load_cert_chain` (pass `cert=` instead), cipher choices (`set_ciphers`), ALPN protocols,
    and options set with `context.options`. What can be seen and not applied raises
    `ValueError` instead of being ignored: CRL checking (`verify_flags`), an SNI callback,
    a key log file.
    """
    if context.verify_flags & (ssl.VERIFY_CRL_CHECK_LEAF | ssl.VERIFY_CRL_CHECK_CHAIN):
        raise ValueError("requestx cannot apply an SSLContext's CRL checking (verify_flags)")
    if context.sni_callback is not None:
        raise ValueError("requestx cannot apply an SSLContext's sni_callback")
    if getattr(context, "keylog_filename", None):
        raise ValueError("requestx cannot apply an SSLContext's keylog_filename")
    verify_peer = context.verify_mode != ssl.CERT_NONE
    ca_pem = None
    if verify_peer:
        certificates = context.get_ca_certs(binary_form=True)
        if certificates:
            ca_pem = "".join(ssl.DER_cert_to_PEM_cert(der) for der in certificates).encode()
    return _core.TLSConfig(
        verify_peer=verify_peer,
        verify_host=verify_peer and context.check_hostname,
        ca_pem=ca_pem,
        ssl_version=_ssl_version(context),
    )


def _ssl_version(context: ssl.SSLContext) -> int:
    minimum = _MIN_VERSION.get(context.minimum_version, 0)
    maximum = _MAX_VERSION.get(context.maximum_version, 0)
    return minimum | maximum


def _with_client_cert(verify: typing.Any, cert: typing.Any, trust_env: bool) -> _core.TLSConfig:
    """httpx's `cert=`: a PEM file holding certificate and key, or (certificate, key) or
    (certificate, key, password)."""
    if isinstance(cert, (str, os.PathLike)):
        cert_file, key_file, password = os.fspath(cert), None, None
    elif isinstance(cert, tuple) and len(cert) in (2, 3):
        cert_file = os.fspath(cert[0])
        key_file = None if cert[1] is None else os.fspath(cert[1])
        password = cert[2] if len(cert) == 3 else None
    else:
        raise TypeError("cert must be a path, (cert, key) or (cert, key, password)")
    for path in (cert_file, key_file):
        if path is not None and not os.path.isfile(path):
            raise OSError(f"Could not find the client certificate file: {path}")
    base = tls_config(verify, None, trust_env)
    # Verification as `verify` says, plus the certificate.
    fields = {} if base is None else base.fields()
    fields.update(
        cert_file=os.fsencode(cert_file),
        key_file=None if key_file is None else os.fsencode(key_file),
        key_password=None if password is None else _password_bytes(password),
    )
    return _core.TLSConfig(**fields)


def _password_bytes(password: typing.Any) -> bytes:
    return password if isinstance(password, bytes) else str(password).encode("utf-8")
