"""The clients requestx is compared with, each in a virtual environment of its own.

A peer's environment holds that library and what its cells need (anyio and the event loops it
supports), nothing else, so no library runs beside another's imports or pinned dependencies.
They live in benchmarks/.venvs/NAME, are made on first use with the interpreter running this
module, and are reused while their requirements are unchanged (a stamp file records them).
requestx itself runs in the project's environment, where scripts/bootstrap.sh built it.

A peer that cannot be installed (no wheel for this Python, a registry that refuses it) is
reported as missing with pip's reason: never silently dropped.
"""

from __future__ import annotations

import subprocess
import sys
import venv
from dataclasses import dataclass
from pathlib import Path

VENVS = Path(__file__).resolve().parent / ".venvs"
INSTALL_TIMEOUT = 600.0


@dataclass(frozen=True)
class Peer:
    name: str
    requirements: tuple[str, ...]  # pip requirements of its environment; () for requestx
    sync: bool  # has a blocking client (benchmarks/clients.py)
    asynchronous: bool  # has an async client (benchmarks/async_clients.py)


_ASYNC = ("anyio>=4", "uvloop>=0.17")
PEERS: dict[str, Peer] = {
    peer.name: peer
    for peer in (
        Peer("requestx", (), True, True),
        Peer("requestx-per-thread", (), True, False),  # sync-get only (compare.plan)
        Peer("httpx", ("httpx==0.28.1", "h2>=4", "trio>=0.22", *_ASYNC), True, True),
        Peer("requests", ("requests>=2.31",), True, False),
        Peer("urllib3", ("urllib3>=2",), True, False),
        Peer("pycurl", ("pycurl>=7.45",), True, False),
        Peer("curl_cffi", ("curl_cffi>=0.7", *_ASYNC), True, True),
        Peer("niquests", ("niquests>=3", *_ASYNC), True, True),
        Peer("aiohttp", ("aiohttp>=3.9", *_ASYNC), False, True),
        Peer("pyreqwest", ("pyreqwest>=0.15", *_ASYNC), True, True),
    )
}


class PeerMissing(Exception):
    """The peer's environment could not be made; the message says why."""


def python_for(peer: Peer) -> Path:
    """The interpreter of `peer`'s environment, made or refreshed first if need be."""
    if not peer.requirements:
        return Path(sys.executable)
    home = VENVS / peer.name
    python = home / "bin" / "python"
    stamp = home / "requirements.stamp"
    wanted = "\n".join(peer.requirements) + "\n"
    if python.exists() and stamp.exists() and stamp.read_text() == wanted:
        return python
    try:
        venv.EnvBuilder(clear=True, with_pip=True).create(home)
        done = subprocess.run(
            [str(python), "-m", "pip", "install", "--disable-pip-version-check", "-q",
             *peer.requirements],
            capture_output=True, text=True, timeout=INSTALL_TIMEOUT,
        )  # fmt: skip
    except (OSError, subprocess.SubprocessError) as exc:
        raise PeerMissing(f"{peer.name}: cannot make its environment: {exc}") from exc
    if done.returncode != 0:
        reason = (done.stderr.strip().splitlines() or ["pip failed"])[-1]
        raise PeerMissing(f"{peer.name}: pip install failed: {reason}")
    stamp.write_text(wanted)
    return python
