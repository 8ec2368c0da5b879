"""What every atheris target shares: the checkout it fuzzes, and how it is run.

A target imports requestx from the checkout it is in (not whatever the interpreter has
installed), with atheris' coverage instrumentation, and hands `test_one_input` to libFuzzer
with the command line's options (`scripts/fuzz.sh` passes the time, the corpora and where
crashes go). A property that does not hold raises `Finding`: an uncaught exception is what
libFuzzer reports as a crash.
"""

from __future__ import annotations

import sys
import typing
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import atheris  # noqa: E402


class Finding(AssertionError):
    """A property of the target that does not hold for this input."""


def check(condition: object, message: str, *details: object) -> None:
    if not condition:
        raise Finding(message + "".join(f"\n  {detail!r}" for detail in details))


def run(test_one_input: typing.Callable[[bytes], None]) -> None:
    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()
