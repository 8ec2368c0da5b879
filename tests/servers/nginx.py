"""nginx for the tests: benchmarks/nginx.py's server (Debian's nginx as a child process).

    with nginx_or_skip(http2=True) as server:
        ...

Without an nginx binary the test is skipped, except on CI (`CI` set), where scripts/test.sh
installs nginx-light and a missing one is an error rather than a silent skip.
"""

from __future__ import annotations

import os
import shutil
import sys
import typing
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent.parent / "benchmarks"))
from nginx import NGINX, Nginx  # noqa: E402

__all__ = ["NGINX", "Nginx", "nginx_or_skip"]


def nginx_or_skip(**options: typing.Any) -> Nginx:
    """An `Nginx(**options)`, not started (use it in a `with`), or a skip when nginx is missing."""
    if not shutil.which(NGINX) and not os.path.exists(NGINX):
        if os.environ.get("CI"):
            raise RuntimeError(f"{NGINX} is missing: scripts/test.sh installs nginx-light")
        pytest.skip(f"needs nginx ({NGINX}): scripts/bootstrap.sh --nginx")
    return Nginx(**options)
