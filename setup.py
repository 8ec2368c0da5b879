"""Build the requestx C engine and its Cython bridge.

Environment switches (all optional):

    REQUESTX_DEBUG=1     -O0 -g3, Cython boundscheck/initializedcheck on, engine asserts on
    REQUESTX_ASAN=1      build with AddressSanitizer + UndefinedBehaviorSanitizer
    REQUESTX_ANNOTATE=1  write Cython's HTML annotation next to _core.pyx
    REQUESTX_CURL_CONFIG path to a curl-config of another libcurl (default: the system one)
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys

from setuptools import Extension, setup


def _flag(name: str) -> bool:
    return os.environ.get(name, "") not in ("", "0", "false", "no")


def _curl_flags() -> tuple[list[str], list[str]]:
    """Compiler and linker flags for libcurl, from curl-config or pkg-config."""
    for tool, cflags_args, libs_args in (
        (os.environ.get("REQUESTX_CURL_CONFIG", "curl-config"), ["--cflags"], ["--libs"]),
        ("pkg-config", ["--cflags", "libcurl"], ["--libs", "libcurl"]),
    ):
        if shutil.which(tool) is None:
            continue
        try:
            cflags = subprocess.check_output([tool, *cflags_args], text=True)
            libs = subprocess.check_output([tool, *libs_args], text=True)
        except (OSError, subprocess.CalledProcessError):
            continue
        return shlex.split(cflags), shlex.split(libs)
    sys.exit(
        "requestx: libcurl development files not found (no curl-config, no pkg-config libcurl).\n"
        "On Debian/Ubuntu run:  apt-get install -y libcurl4-openssl-dev"
    )


DEBUG = _flag("REQUESTX_DEBUG")
ASAN = _flag("REQUESTX_ASAN")

curl_cflags, curl_libs = _curl_flags()
compile_args = ["-std=c11", "-Wall", "-Wextra", "-Wno-unused-parameter", "-D_GNU_SOURCE"]
link_args: list[str] = []
if DEBUG or ASAN:
    compile_args += ["-O0", "-g3", "-fno-omit-frame-pointer"]
else:
    compile_args += ["-O2", "-g", "-DNDEBUG"]
if ASAN:
    sanitizers = "-fsanitize=address,undefined"
    compile_args += [sanitizers]
    link_args += [sanitizers]

directives = {
    "language_level": 3,
    "boundscheck": DEBUG,
    "wraparound": DEBUG,
    "initializedcheck": DEBUG,
    "cdivision": True,
    "embedsignature": True,
}

ext = Extension(
    "requestx._core",
    sources=[
        "requestx/_core.pyx",
        "csrc/buffer.c",
        "csrc/completion.c",
        "csrc/transfer.c",
        "csrc/engine.c",
        "csrc/h2gate.c",
        "csrc/tls.c",
    ],
    include_dirs=["csrc"],
    depends=[
        "csrc/buffer.h",
        "csrc/clock.h",
        "csrc/completion.h",
        "csrc/transfer.h",
        "csrc/h2gate.h",
        "csrc/tls.h",
        "csrc/engine.h",
        "requestx/_core.pxd",
    ],
    extra_compile_args=compile_args + [f for f in curl_cflags if f.startswith(("-I", "-D"))],
    extra_link_args=link_args + curl_libs + ["-pthread"],
)

try:
    from Cython.Build import cythonize
except ImportError:  # pragma: no cover - Cython is a build requirement
    sys.exit("requestx: Cython is needed to build from source: pip install 'Cython>=3.0'")

setup(
    ext_modules=cythonize(
        [ext],
        compiler_directives=directives,
        annotate=_flag("REQUESTX_ANNOTATE"),
        force=DEBUG or ASAN,
    ),
)
