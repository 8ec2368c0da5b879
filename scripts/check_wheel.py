#!/usr/bin/env python3
"""Check an installed requestx: which libcurl it carries and that no system libcurl is used.

    python scripts/check_wheel.py [--require-installed]

Prints the libcurl build inside the extension (``requestx.__libcurl__``), then checks:

* after ``import requestx``, no shared libcurl or libnghttp2 is mapped into the process
  (``/proc/self/maps``): the extension carries its own, statically linked;
* loading the extension alone (in a fresh interpreter, with ctypes) maps none of the shared
  libraries the bundled build replaces: libcurl, libnghttp2, libssl, libcrypto, libz, libbrotli*,
  libzstd (``import requestx`` itself maps Python's own libssl through the ``ssl`` module, so
  that check has to leave Python's modules out);
* libcurl has HTTP/2, brotli and zstd, and the content decoders (``csrc/decode.c``) decode gzip,
  deflate, br and zstd (``Accept-Encoding`` offers what they decode);
* the extension needs no glibc symbol version newer than its wheel's platform tag promises
  (``manylinux_2_28``: nothing past ``GLIBC_2.28``), read from the ELF file's version needs;
  ``--max-glibc`` sets the bound for a build that has no such tag (an in-place build).

It also says which CA store ``verify=True`` uses on this machine (a wheel carries the paths of
the machine that built it; requestx looks where this distribution keeps its store), and fails
when there is none.

``--require-installed`` also fails when requestx is imported from a source checkout rather than
from site-packages. Exit status: 0 when every check passes, 1 otherwise.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import importlib.util
import os
import re
import struct
import subprocess
import sys
from pathlib import Path

# Shared libraries the bundled, static build makes unnecessary.
BUNDLED = ("libcurl", "libnghttp2", "libssl", "libcrypto", "libz.", "libbrotli", "libzstd")
REQUIRED_FEATURES = ("http2", "brotli", "zstd")
REQUIRED_CODINGS = ("gzip", "deflate", "br", "zstd")

# Run in a fresh interpreter: the libraries mapped by loading the extension and nothing else.
_LOAD_EXTENSION_ALONE = """
import ctypes, sys
def mapped():
    with open("/proc/self/maps") as f:
        return {line.split()[-1] for line in f if "/" in line}
before = mapped()
ctypes.CDLL(sys.argv[1])
for path in sorted(mapped() - before):
    print(path)
"""


# Which shared libraries a process has mapped is read from /proc: Linux only. On macOS and
# Windows those two checks are skipped (and say so); the others run everywhere.
HAVE_PROC_MAPS = os.path.exists("/proc/self/maps")


def mapped_files() -> set[str]:
    """The files mapped into this process."""
    with open("/proc/self/maps") as maps:
        return {line.split()[-1] for line in maps if "/" in line}


def extension_path() -> Path:
    """The requestx._core shared object, found without importing requestx."""
    spec = importlib.util.find_spec("requestx")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("check_wheel: requestx is not installed")
    for folder in spec.submodule_search_locations:
        found = sorted(Path(folder).glob("_core*.so")) + sorted(Path(folder).glob("_core*.pyd"))
        if found:
            return found[0]
    raise SystemExit("check_wheel: requestx has no _core extension module")


def libraries_the_extension_maps(path: Path) -> list[str]:
    result = subprocess.run(
        [sys.executable, "-c", _LOAD_EXTENSION_ALONE, str(path)],
        check=True,
        capture_output=True,
        text=True,
    )
    own = path.resolve()
    return [line for line in result.stdout.splitlines() if line and Path(line).resolve() != own]


SHT_GNU_VERNEED = 0x6FFFFFFE


def glibc_versions_needed(path: Path) -> set[tuple[int, ...]]:
    """The GLIBC_x.y symbol versions an ELF shared object needs (its .gnu.version_r section)."""
    data = path.read_bytes()
    if data[:4] != b"\x7fELF":
        raise SystemExit(f"check_wheel: {path} is not an ELF file")
    wide = data[4] == 2  # ELFCLASS64
    order = "<" if data[5] == 1 else ">"
    if wide:
        shoff, shentsize, shnum = (
            struct.unpack_from(order + "Q", data, 0x28)[0],
            *struct.unpack_from(order + "HH", data, 0x3A),
        )
        section = order + "IIQQQQIIQQ"
    else:
        shoff, shentsize, shnum = (
            struct.unpack_from(order + "I", data, 0x20)[0],
            *struct.unpack_from(order + "HH", data, 0x2E),
        )
        section = order + "IIIIIIIIII"
    headers = [struct.unpack_from(section, data, shoff + i * shentsize) for i in range(shnum)]
    versions: set[tuple[int, ...]] = set()
    for _name, kind, _flags, _addr, offset, _size, link, info, _align, _entsize in headers:
        if kind != SHT_GNU_VERNEED:
            continue
        strings = headers[link][4]  # the linked string table's file offset
        entry = offset
        for _ in range(info):  # info: the number of Verneed entries
            fields = struct.unpack_from(order + "HHIII", data, entry)
            _version, count, _file, aux, following = fields
            item = entry + aux
            for _ in range(count):
                _hash, _flags2, _other, name, next_aux = struct.unpack_from(
                    order + "IHHII", data, item
                )
                end = data.index(b"\0", strings + name)
                text = data[strings + name : end].decode("ascii", "replace")
                match = re.fullmatch(r"GLIBC_(\d+(?:\.\d+)+)", text)
                if match:
                    versions.add(tuple(int(part) for part in match.group(1).split(".")))
                item += next_aux
            entry += following
    return versions


def glibc_promised_by_tag() -> tuple[int, int] | None:
    """The oldest glibc the installed wheel's manylinux tag promises to run on, if it has one."""
    try:
        wheel = importlib.metadata.distribution("requestx-curl").read_text("WHEEL") or ""
    except importlib.metadata.PackageNotFoundError:
        return None
    promised = []
    for line in wheel.splitlines():
        if not line.startswith("Tag:"):
            continue
        platform = line.split("-")[-1]
        match = re.match(r"manylinux_(\d+)_(\d+)_", platform)
        if match:
            promised.append((int(match.group(1)), int(match.group(2))))
        elif platform.startswith("manylinux2014_"):
            promised.append((2, 17))
    return min(promised) if promised else None


def check_glibc(extension: Path, bound: tuple[int, int] | None) -> str | None:
    """Say what glibc the extension needs; a failure message when that exceeds the bound."""
    needed = glibc_versions_needed(extension)
    if not needed:
        print("glibc: no GLIBC symbol versions needed (not a glibc build)")
        return None
    newest = max(needed)
    shown = ".".join(map(str, newest))
    if bound is None:
        print(f"glibc: needs GLIBC_{shown} (no manylinux tag and no --max-glibc to hold it to)")
        return None
    allowed = ".".join(map(str, bound))
    print(f"glibc: needs GLIBC_{shown}; allowed: {allowed}")
    if newest[:2] > bound:
        too_new = sorted(".".join(map(str, v)) for v in needed if v[:2] > bound)
        return f"the extension needs glibc symbols newer than {allowed}: {', '.join(too_new)}"
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--require-installed",
        action="store_true",
        help="fail unless requestx is imported from site-packages (not a source checkout)",
    )
    parser.add_argument(
        "--max-glibc",
        metavar="X.Y",
        help="fail if the extension needs a glibc symbol newer than X.Y (default: what the "
        "installed wheel's manylinux tag promises)",
    )
    args = parser.parse_args(argv)
    failures: list[str] = []

    extension = extension_path()
    own_libraries = libraries_the_extension_maps(extension) if HAVE_PROC_MAPS else []

    import requestx

    where = Path(requestx.__file__).resolve()
    print(f"requestx {requestx.__version__} from {where.parent}")
    print(f"extension: {extension.name}")
    if args.require_installed and "site-packages" not in where.parts:
        failures.append(f"requestx is imported from {where.parent}, not from site-packages")

    info = requestx.__libcurl__
    print("libcurl:")
    width = max(len(key) for key in info)
    for key, value in info.items():
        shown = " ".join(value) if isinstance(value, tuple) else value
        if key == "version_num" and isinstance(value, int):
            shown = f"0x{value:06x}"
        print(f"  {key:<{width}}  {shown}")

    for feature in REQUIRED_FEATURES:
        if not info.get(feature):
            failures.append(f"libcurl is built without {feature}")
    from requestx import _core

    codings = _core.decoder_codings()
    print(f"content decoders: {', '.join(codings)}")
    for coding in REQUIRED_CODINGS:
        if coding not in codings:
            failures.append(f"the content decoders are built without {coding}")

    # The CA store compiled into libcurl is the build machine's: say which store verify=True
    # uses here, as requestx itself chooses it.
    from requestx import _tls

    try:
        chosen = _tls._system_store_or_certifi().fields()
    except OSError as exc:  # ssl.SSLError: no store at all
        failures.append(f"no CA store for verify=True: {exc}")
    else:
        if chosen.get("ca_file") is None and chosen.get("ca_path") is None:
            print(f"CA store: libcurl's own ({info.get('cainfo')}, {info.get('capath')})")
        else:
            print(f"CA store: {chosen.get('ca_file')!r}, {chosen.get('ca_path')!r}")
    if not HAVE_PROC_MAPS:
        print("maps: not checked (no /proc/self/maps on this platform)")
    after_import = mapped_files() if HAVE_PROC_MAPS else set()
    shared_curl = sorted(
        path
        for path in after_import
        if os.path.basename(path).startswith(("libcurl", "libnghttp2"))
    )
    if shared_curl:
        failures.append("a shared libcurl/libnghttp2 is loaded: " + ", ".join(shared_curl))
    elif HAVE_PROC_MAPS:
        print("maps: no shared libcurl or libnghttp2 loaded after import requestx")
        print("libraries the extension maps when loaded alone:")
        for path in own_libraries:
            print(f"  {path}")
        if not own_libraries:
            print("  (none beyond what the interpreter has mapped already)")
    replaced = [path for path in own_libraries if os.path.basename(path).startswith(BUNDLED)]
    if replaced:
        failures.append(
            "the extension needs shared libraries it should carry: " + ", ".join(replaced)
        )

    if sys.platform.startswith("linux"):
        if args.max_glibc:
            major, _, minor = args.max_glibc.partition(".")
            bound: tuple[int, int] | None = (int(major), int(minor or 0))
        else:
            bound = glibc_promised_by_tag()
        failure = check_glibc(extension, bound)
        if failure:
            failures.append(failure)

    for failure in failures:
        print(f"FAIL: {failure}", file=sys.stderr)
    print("check_wheel: " + ("FAILED" if failures else "ok"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
