"""Debian's tinyproxy as a second, independent HTTP proxy implementation for the proxy tests.

    with tinyproxy_or_skip(credentials=("user", "secret")) as proxy:
        requestx.get(url, proxy=proxy.url_with_credentials)
        assert proxy.log_mentions("CONNECT")

tinyproxy runs in the foreground (`-d`) as a child process, on 127.0.0.1 and a free port, with
its config and log in a temporary directory; it forwards http and tunnels https (CONNECT to any
port), adds `Via: 1.1 tinyproxy` to what it forwards, and with `credentials` demands Basic
proxy authentication. Without the binary the test is skipped, except on CI (`CI` set), where
scripts/test.sh installs tinyproxy-bin and a missing one is an error.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from ._lifecycle import Lifecycle

TINYPROXY = shutil.which("tinyproxy") or "/usr/bin/tinyproxy"
START_TIMEOUT = 10.0


def tinyproxy_or_skip(credentials: tuple[str, str] | None = None) -> Tinyproxy:
    if not os.path.exists(TINYPROXY):
        if os.environ.get("CI"):
            raise RuntimeError(f"{TINYPROXY} is missing: scripts/test.sh installs tinyproxy-bin")
        pytest.skip("needs tinyproxy: scripts/bootstrap.sh --tinyproxy")
    return Tinyproxy(credentials)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Tinyproxy(Lifecycle):
    def __init__(self, credentials: tuple[str, str] | None = None) -> None:
        self.credentials = credentials
        self.port = 0
        self._directory: tempfile.TemporaryDirectory[str] | None = None
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def log(self) -> str:
        assert self._directory is not None
        path = Path(self._directory.name) / "tinyproxy.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def start(self) -> None:
        self._directory = tempfile.TemporaryDirectory(prefix="tinyproxy-")
        run = Path(self._directory.name)
        self.port = _free_port()
        lines = [
            f"Port {self.port}",
            "Listen 127.0.0.1",
            "Allow 127.0.0.1",
            "Timeout 30",
            "MaxClients 64",
            f'LogFile "{run / "tinyproxy.log"}"',
            "LogLevel Info",
            f'PidFile "{run / "tinyproxy.pid"}"',
        ]
        if self.credentials is not None:
            lines.append(f"BasicAuth {self.credentials[0]} {self.credentials[1]}")
        (run / "tinyproxy.conf").write_text("\n".join(lines) + "\n")
        self._process = subprocess.Popen(
            [TINYPROXY, "-d", "-c", str(run / "tinyproxy.conf")],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                raise RuntimeError(f"tinyproxy exited at start: {self.log[-2000:]}")
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.5).close()
                return
            except OSError:
                time.sleep(0.05)
        self.stop()
        raise RuntimeError("tinyproxy did not start listening")

    def stop(self) -> None:
        if self._process is not None:
            self._process.terminate()
            try:
                self._process.wait(5)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait(5)
            self._process = None
        if self._directory is not None:
            self._directory.cleanup()
            self._directory = None
