"""The open-file limit (RLIMIT_NOFILE) for cells with thousands of connections.

Every connection is a file descriptor in the client's process and another in nginx's. The
usual soft limit (1,024) stops a client well short of 10,000 connections, with an error that
says "Too many open files" somewhere deep in a library, or nginx's "worker_connections are not
enough". So the processes that hold connections (compare.py, which nginx inherits its limit
from, and each async cell) raise their soft limit to the hard limit first, which needs no
privilege, and check that it is enough before they start; when it is not, the cell says so in
words (`shortfall`) instead of failing obscurely.
"""

from __future__ import annotations

import contextlib
import resource
from dataclasses import dataclass

# Descriptors a process needs besides its connections: the interpreter and its libraries,
# epoll and event fds, pipes, a runtime's threads, nginx's log files and listening sockets.
RESERVE = 256
CEILING = 1 << 20  # what "unlimited" is raised to (Linux's default fs.nr_open)


@dataclass(frozen=True)
class OpenFiles:
    soft: int  # the limit in force
    hard: int  # how far an unprivileged process may raise it

    def allows(self, connections: int) -> bool:
        return self.soft >= needed(connections)


def needed(connections: int) -> int:
    """The open-file limit a process needs to hold `connections` connections."""
    return connections + RESERVE


def _number(limit: int) -> int:
    return CEILING if limit == resource.RLIM_INFINITY else limit


def raise_open_files() -> OpenFiles:
    """Raise this process's soft RLIMIT_NOFILE to its hard limit (children inherit it)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = _number(hard)
    if _number(soft) < target:
        with contextlib.suppress(ValueError, OSError):  # the limits read below say what holds
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    return OpenFiles(_number(soft), _number(hard))


def shortfall(connections: int, limits: OpenFiles, what: str = "") -> str | None:
    """Why `connections` connections (`what`, if given, says what needs them) cannot be held
    under `limits`, or None."""
    if limits.allows(connections):
        return None
    return (
        f"{what or f'{connections:,} connections'} need an open-file limit of "
        f"{needed(connections):,}, but RLIMIT_NOFILE is {limits.soft:,} (hard limit "
        f"{limits.hard:,}): raise the hard limit (`ulimit -Hn {needed(connections)}` as root, "
        "LimitNOFILE= in a systemd unit, or nofile in /etc/security/limits.conf) and run again"
    )
