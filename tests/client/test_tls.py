"""TLS: verification on by default, what each verify= form trusts, client certificates (mutual
TLS), and certificate failures named in ConnectError, for IP literals and DNS names.

Servers are hypercorn over TLS with trustme certificates: a good one (`tls_server`), one for
another host name, an expired one and a self-signed one, and one that requires a client
certificate signed by the test CA.
"""

from __future__ import annotations

import datetime
import os
import shutil
import ssl
import subprocess
import typing
from pathlib import Path

import pytest

import requestx
from tests.servers import HypercornServer
from tests.support.tls import TLSFiles


@pytest.fixture(autouse=True)
def _drop_shared_connections() -> typing.Iterator[None]:
    """The top-level functions keep idle connections in their shared engine. A TLS server
    stopping at the end of the session waits for an idle client to answer its close_notify,
    so the shared engine is closed after each test here (the next call starts a fresh one)."""
    yield
    from requestx import _client

    engine, _client._shared_engine = _client._shared_engine, None
    if engine is not None:
        engine.close()


class _CertServer:
    """A TLS server presenting a chosen certificate (key and chain in one PEM file)."""

    def __init__(self, pem: Path, **kwargs: typing.Any) -> None:
        self.server = HypercornServer(certfile=str(pem), keyfile=str(pem), **kwargs)

    def __enter__(self) -> HypercornServer:
        return self.server.__enter__()

    def __exit__(self, *exc_info: typing.Any) -> None:
        self.server.__exit__(*exc_info)


def _self_signed_pem(*names: str) -> bytes:
    """Key and certificate, signed by itself, valid now for `names`: its only fault is that
    nothing a client trusts vouches for it. (libcurl 8 checks the host name before the chain,
    so a self-signed certificate for another name would be reported as a name problem.)"""
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, names[0])])
    alternatives: list[x509.GeneralName] = []
    for name in names:
        try:
            alternatives.append(x509.IPAddress(ipaddress.ip_address(name)))
        except ValueError:
            alternatives.append(x509.DNSName(name))
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(hours=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName(alternatives), critical=False)
        .sign(key, hashes.SHA256())
    )
    key_pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    return key_pem + cert.public_bytes(serialization.Encoding.PEM)


@pytest.fixture(scope="module")
def bad_servers(
    tls: TLSFiles, tmp_path_factory: pytest.TempPathFactory
) -> typing.Iterator[dict[str, HypercornServer]]:
    folder = tmp_path_factory.mktemp("bad-tls")
    wrong_host = folder / "wrong-host.pem"
    tls.ca.issue_cert("example.org").private_key_and_cert_chain_pem.write_to_path(str(wrong_host))
    expired = folder / "expired.pem"
    past = datetime.datetime(2020, 1, 1, tzinfo=datetime.timezone.utc)
    tls.ca.issue_cert(
        "127.0.0.1", "localhost", not_before=past, not_after=past + datetime.timedelta(days=1)
    ).private_key_and_cert_chain_pem.write_to_path(str(expired))
    self_signed = folder / "self-signed.pem"
    self_signed.write_bytes(_self_signed_pem("127.0.0.1", "localhost"))
    with (
        _CertServer(wrong_host) as wrong,
        _CertServer(expired) as old,
        _CertServer(self_signed) as alone,
    ):
        yield {"wrong-host": wrong, "expired": old, "self-signed": alone}


EXPECTED_PROBLEM = {
    "wrong-host": "does not match|subject name|no alternative certificate",
    "expired": "expired",
    "self-signed": "self[- ]signed|unable to get local issuer",
}


@pytest.mark.parametrize("kind", sorted(EXPECTED_PROBLEM))
@pytest.mark.parametrize("host", ["127.0.0.1", "localhost"])
def test_certificate_problems_are_connect_errors_naming_them(
    tls: TLSFiles, bad_servers: dict[str, HypercornServer], kind: str, host: str
) -> None:
    url = bad_servers[kind].url.replace("127.0.0.1", host) + "/json"
    problem = EXPECTED_PROBLEM[kind]
    client = requestx.Client(verify=tls.ca_file)
    with client, pytest.raises(requestx.ConnectError, match=problem) as caught:
        client.get(url)
    assert caught.value.request.url == requestx.URL(url)


def test_default_verification_refuses_an_unknown_ca(tls_server: HypercornServer) -> None:
    with requestx.Client() as client, pytest.raises(requestx.ConnectError, match="certificate"):
        client.get(tls_server.url + "/json")


def test_verify_forms(tls: TLSFiles, tls_server: HypercornServer, tmp_path: Path) -> None:
    url = tls_server.url + "/json"
    # A CA bundle file, and a directory of hashed certificates (when c_rehash is available).
    assert requestx.get(url, verify=tls.ca_file).json() == {"Hello": "world!"}
    assert requestx.get(url, verify=Path(tls.ca_file)).status_code == 200
    if shutil.which("openssl"):
        shutil.copy(tls.ca_file, tmp_path / "ca.pem")
        subject_hash = subprocess.run(
            ["openssl", "x509", "-hash", "-noout", "-in", tls.ca_file],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        os.symlink(tmp_path / "ca.pem", tmp_path / f"{subject_hash}.0")
        assert requestx.get(url, verify=str(tmp_path)).status_code == 200
    # No verification.
    assert requestx.get(url, verify=False).status_code == 200
    # Bad values.
    with pytest.raises(OSError, match="invalid path"):
        requestx.Client(verify=str(tmp_path / "missing.pem"))
    with pytest.raises(TypeError):
        requestx.Client(verify=42)


def test_ssl_context(
    tls: TLSFiles, tls_server: HypercornServer, bad_servers: dict[str, HypercornServer]
) -> None:
    url = tls_server.url + "/json"
    context = ssl.create_default_context(cafile=tls.ca_file)
    with requestx.Client(verify=context) as client:
        assert client.get(url).status_code == 200
        with pytest.raises(requestx.ConnectError, match="match|subject name"):
            client.get(bad_servers["wrong-host"].url)
    # check_hostname off: the wrong host name is accepted, the chain is still checked.
    relaxed = ssl.create_default_context(cafile=tls.ca_file)
    relaxed.check_hostname = False
    with requestx.Client(verify=relaxed) as client:
        assert client.get(bad_servers["wrong-host"].url + "/json").status_code == 200
        with pytest.raises(requestx.ConnectError):
            client.get(bad_servers["self-signed"].url + "/json")
    # CERT_NONE: nothing is checked.
    unchecked = ssl.create_default_context()
    unchecked.check_hostname = False
    unchecked.verify_mode = ssl.CERT_NONE
    with requestx.Client(verify=unchecked) as client:
        assert client.get(bad_servers["self-signed"].url + "/json").status_code == 200
    # A context trusting only the test CA must not also trust the system store: an unrelated
    # server certificate fails (checked against the self-signed one above). What cannot be
    # applied is refused.
    crl = ssl.create_default_context(cafile=tls.ca_file)
    crl.verify_flags |= ssl.VERIFY_CRL_CHECK_LEAF
    with pytest.raises(ValueError, match="CRL"):
        requestx.Client(verify=crl)


def test_tls_version_bounds_from_the_context(tls: TLSFiles, tls_server: HypercornServer) -> None:
    context = ssl.create_default_context(cafile=tls.ca_file)
    context.maximum_version = ssl.TLSVersion.TLSv1_2
    with requestx.Client(verify=context) as client:
        assert client.get(tls_server.url + "/json").status_code == 200


def test_ssl_cert_file_is_honoured_with_trust_env(
    tls: TLSFiles, tls_server: HypercornServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = tls_server.url + "/json"
    monkeypatch.setenv("SSL_CERT_FILE", tls.ca_file)
    with requestx.Client() as client:
        assert client.get(url).status_code == 200
    with requestx.Client(trust_env=False) as client, pytest.raises(requestx.ConnectError):
        client.get(url)


def test_ssl_cert_dir_is_honoured_with_trust_env(
    tls: TLSFiles, tls_server: HypercornServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    if shutil.which("openssl") is None:
        pytest.skip("openssl is needed to name the hashed certificate")
    subject_hash = subprocess.run(
        ["openssl", "x509", "-hash", "-noout", "-in", tls.ca_file],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    shutil.copy(tls.ca_file, tmp_path / f"{subject_hash}.0")
    monkeypatch.setenv("SSL_CERT_DIR", str(tmp_path))
    with requestx.Client() as client:
        assert client.get(tls_server.url + "/json").status_code == 200


def test_unverified_connections_are_not_reused_for_verified_requests(
    tls_server: HypercornServer,
) -> None:
    # The top-level functions share one engine and its pool: a connection opened with
    # verify=False must not carry a request that asked for verification.
    url = tls_server.url + "/json"
    assert requestx.get(url, verify=False).status_code == 200
    with pytest.raises(requestx.ConnectError, match="certificate"):
        requestx.get(url)


@pytest.fixture(scope="module")
def mtls(
    tls: TLSFiles, tmp_path_factory: pytest.TempPathFactory
) -> typing.Iterator[tuple[HypercornServer, Path, Path]]:
    """A server that requires a client certificate from the test CA; and such a certificate
    as one PEM file and as separate certificate and key files."""
    folder = tmp_path_factory.mktemp("mtls")
    client_cert = tls.ca.issue_cert("client@example.org")
    combined = folder / "client.pem"
    client_cert.private_key_and_cert_chain_pem.write_to_path(str(combined))
    cert_only = folder / "client-cert.pem"
    key_only = folder / "client-key.pem"
    client_cert.cert_chain_pems[0].write_to_path(str(cert_only))
    client_cert.private_key_pem.write_to_path(str(key_only))
    server = HypercornServer(certfile=tls.cert_file, keyfile=tls.cert_file, client_ca=tls.ca_file)
    with server as running:
        yield running, combined, folder


def test_client_certificates(tls: TLSFiles, mtls: tuple[HypercornServer, Path, Path]) -> None:
    server, combined, folder = mtls
    url = server.url + "/json"
    with requestx.Client(verify=tls.ca_file, cert=str(combined)) as client:
        assert client.get(url).status_code == 200
    pair = (str(folder / "client-cert.pem"), str(folder / "client-key.pem"))
    with requestx.Client(verify=tls.ca_file, cert=pair) as client:
        assert client.get(url).status_code == 200
    refused = (requestx.ConnectError, requestx.ReadError, requestx.RemoteProtocolError)
    client = requestx.Client(verify=tls.ca_file)
    with client, pytest.raises(refused):  # no client certificate
        client.get(url)
    with pytest.raises(OSError, match="client certificate"):
        requestx.Client(cert=str(folder / "missing.pem"))


def test_a_client_certificate_connection_is_not_reused_without_it(
    tls: TLSFiles, mtls: tuple[HypercornServer, Path, Path]
) -> None:
    # Shared engine again: the connection authenticated with a client certificate must not
    # carry a request made without one.
    server, combined, _ = mtls
    url = server.url + "/json"
    assert requestx.get(url, verify=tls.ca_file, cert=str(combined)).status_code == 200
    refused = (requestx.ConnectError, requestx.ReadError, requestx.RemoteProtocolError)
    with pytest.raises(refused):
        requestx.get(url, verify=tls.ca_file)


@pytest.mark.anyio
async def test_async_client_verifies_too(tls: TLSFiles, tls_server: HypercornServer) -> None:
    async with requestx.AsyncClient(verify=tls.ca_file) as client:
        assert (await client.get(tls_server.url + "/json")).status_code == 200
    async with requestx.AsyncClient() as client:
        with pytest.raises(requestx.ConnectError, match="certificate"):
            await client.get(tls_server.url + "/json")


def test_clients_share_the_default_tls_settings() -> None:
    # Constructing a client must not load a CA bundle (httpx does, every time): the default
    # settings object is built once and shared. Construction time: docs/performance.md.
    with requestx.Client() as first, requestx.Client() as second:
        assert first._transport._plan.tls is second._transport._plan.tls


@pytest.mark.skipif(
    not os.path.isfile("/etc/ssl/certs/ca-certificates.crt"), reason="not a Debian-style store"
)
def test_a_wheel_built_elsewhere_finds_this_systems_ca_store(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A manylinux wheel's libcurl has AlmaLinux's bundle path compiled in, missing on Debian:
    # libcurl would then fail every request (CURLE_SSL_CACERT_BADFILE), so requestx hands it
    # the store this system has instead of falling back to certifi.
    from requestx import _core, _tls

    monkeypatch.setattr(_core, "LIBCURL_CAINFO", "/etc/pki/tls/certs/ca-bundle.crt.missing")
    monkeypatch.setattr(_core, "LIBCURL_CAPATH", None)
    fields = _tls._system_store_or_certifi().fields()
    assert fields["ca_file"] == b"/etc/ssl/certs/ca-certificates.crt"
    assert fields["ca_path"] == b"/etc/ssl/certs"
    # libcurl's own store, when it is there, is left to libcurl
    monkeypatch.setattr(_core, "LIBCURL_CAINFO", "/etc/ssl/certs/ca-certificates.crt")
    assert _tls._system_store_or_certifi().fields()["ca_file"] is None
