"""Run a snippet of Python in a child interpreter that imports this checkout's requestx.

Tests that send signals, or end event loops abruptly, do it to a child: doing it to the test
process would hit pytest itself.
"""

from __future__ import annotations

import os
import subprocess
import sys

from tests.support import paths

ROOT = str(paths.ROOT)


def run_child(
    code: str,
    *args: str,
    timeout: float,
    options: tuple[str, ...] = (),
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """`python [options] -c code args...` from the checkout's root, output captured as text;
    `env`: variables to set in the child beside this process's."""
    return subprocess.run(
        [sys.executable, *options, "-c", code, *args],
        cwd=ROOT,
        env={**os.environ, **(env or {}), "PYTHONPATH": ROOT},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
