"""Where the tests find the libcurl the extension was built with (scripts/build_libcurl.sh)."""

from __future__ import annotations

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "build_libcurl.sh"


def prefix() -> Path | None:
    """The bundled build's prefix (include/, lib/, link-args.txt), or None when the tests run
    from a copy beside an installed wheel, without the script. Builds it when the cache is
    empty, as setup.py does."""
    if not SCRIPT.exists():
        return None
    out = subprocess.run(["bash", str(SCRIPT)], check=True, stdout=subprocess.PIPE, text=True)
    return Path(out.stdout.split()[-1])
