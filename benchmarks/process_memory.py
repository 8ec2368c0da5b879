"""This process's memory, as the soaks and the leak tests read it (Linux).

`rss_bytes()` is what the kernel counts (/proc/self/statm); `c_heap_in_use()` is what malloc
has handed out and not had back (glibc's mallinfo2: every arena, and blocks mmapped on their
own); `c_heap_free()` is what malloc holds free in its arenas for reuse. A growing RSS with a
flat heap in use and a growing free figure is the allocator's, not a leak. Used by
benchmarks/run_chaos.py and tests/engine/test_no_leaks.py.
"""

from __future__ import annotations

import ctypes
import os
import typing

PAGE_SIZE = os.sysconf("SC_PAGE_SIZE")


class _MallInfo2(ctypes.Structure):
    _fields_ = [
        (name, ctypes.c_size_t)
        for name in (
            "arena", "ordblks", "smblks", "hblks", "hblkhd",
            "usmblks", "fsmblks", "uordblks", "fordblks", "keepcost",
        )
    ]  # fmt: skip


def _mallinfo2() -> typing.Any:
    """glibc's mallinfo2, or None."""
    try:
        function = ctypes.CDLL(None).mallinfo2
    except (OSError, AttributeError):
        return None  # not glibc 2.33 or later
    function.restype = _MallInfo2
    return function


_MALLINFO2 = _mallinfo2()
HAVE_MALLINFO2 = _MALLINFO2 is not None


def rss_bytes() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * PAGE_SIZE


def c_heap_in_use() -> int | None:
    """Bytes malloc has handed out and not had back; None without mallinfo2."""
    if _MALLINFO2 is None:
        return None
    info = _MALLINFO2()
    return int(info.uordblks + info.hblkhd)


def c_heap_free() -> int | None:
    """Bytes free inside malloc's arenas, kept for reuse (some of them may be paged out or
    given back with madvise, so not all count in RSS); None without mallinfo2."""
    if _MALLINFO2 is None:
        return None
    return int(_MALLINFO2().fordblks)
