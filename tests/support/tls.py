"""A test CA and a server certificate, written to files (the `tls` fixture in conftest.py makes
one per session; scripts/smoke_wheel.py makes its own)."""

from __future__ import annotations

from pathlib import Path


class TLSFiles:
    """A test CA and a server certificate for 127.0.0.1 and localhost, written to files."""

    def __init__(self, directory: Path) -> None:
        import trustme

        self.ca = trustme.CA()
        self.server_cert = self.ca.issue_cert("127.0.0.1", "localhost")
        self.ca_file = str(directory / "ca.pem")
        self.cert_file = str(directory / "server.pem")
        self.ca.cert_pem.write_to_path(self.ca_file)
        self.server_cert.private_key_and_cert_chain_pem.write_to_path(self.cert_file)
