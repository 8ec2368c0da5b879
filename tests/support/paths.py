"""Where the checkout is, for tests that read or run its files (scripts/, csrc/, benchmarks/,
tests/c/, README.md): one definition, whatever folder of tests/ the test lives in."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
