"""Whether the suite runs against the ASan + UBSan extension (scripts/test_asan.sh).

Under it, the sanitizer runtime is preloaded into every child process (so valgrind and the
ThreadSanitizer build of the engine test cannot run), and ASan's allocator keeps freed memory
in quarantine (so RSS and malloc figures say nothing about leaks). Tests that measure those
skip themselves with `skip_under_asan`; the sanitizers check the same code more strictly.
"""

from __future__ import annotations

import os

import pytest

UNDER_ASAN = os.environ.get("REQUESTX_TEST_ASAN") == "1"

skip_under_asan = pytest.mark.skipif(
    UNDER_ASAN, reason="measures memory or runs its own sanitizer; scripts/test_asan.sh checks it"
)
