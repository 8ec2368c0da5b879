"""What requestx's public names add to httpx's."""

from __future__ import annotations

# Public names requestx has and httpx does not (docs/differences.md, "Additions").
REQUESTX_ONLY_NAMES = {"ResponseTooLarge"}
