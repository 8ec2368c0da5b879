"""Build the requestx C engine and its Cython bridge.

Environment switches (all optional):

    REQUESTX_DEBUG=1     -O0 -g3, Cython boundscheck/initializedcheck on, engine asserts on
    REQUESTX_ASAN=1      build with AddressSanitizer + UndefinedBehaviorSanitizer
    REQUESTX_ANNOTATE=1  write Cython's HTML annotation next to _core.pyx
    REQUESTX_LIBCURL_PREFIX  a prefix scripts/build_libcurl.sh built (default: run the script,
                         which builds the pinned libcurl once and then answers from its cache)
    REQUESTX_SYSTEM_LIBCURL=1  link the system libcurl instead of the bundled one; refused below
                         LIBCURL_FLOOR
    REQUESTX_CURL_CONFIG path to the curl-config of the libcurl to link (implies the above)
    REQUESTX_LIBCURL_PATCHES=0  build and link stock libcurl, without requestx's patches
                         (scripts/libcurl-patches/); unset or 1: with them
    REQUESTX_LIBCURL_DEBUG=1  build and link libcurl's debug build (its DEBUGASSERTs abort);
                         for scripts/test_libcurl_build.sh, not for shipping
    (the last two are read by scripts/build_libcurl.sh, which keeps each build apart in its cache)
    REQUESTX_ENGINE_HEAP=libc  the engine's heap from the C library's malloc where it would be
                         the bundled jemalloc (Linux; csrc/heap.h); ASan builds always are
"""

from __future__ import annotations

import glob
import os
import shlex
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext


def _flag(name: str) -> bool:
    return os.environ.get(name, "") not in ("", "0", "false", "no")


# The oldest system libcurl requestx accepts with REQUESTX_SYSTEM_LIBCURL=1: every libcurl bug
# the engine no longer works around is fixed there (docs/architecture.md, "Which libcurl").
LIBCURL_FLOOR = (8, 11, 0)
HERE = os.path.dirname(os.path.abspath(__file__))
MACOS = sys.platform == "darwin"
WINDOWS = sys.platform == "win32"


# Which libcurl build the extension was last linked against. setuptools relinks only when a
# source or `depends` file is newer than the module, and a libcurl build with other patches
# lives in another cache directory whose archives may be older: the stamp is rewritten (so it
# is newer) exactly when the build changes.
LIBCURL_STAMP = os.path.join(HERE, "build", "libcurl-build.txt")


def _note_libcurl_build(prefix: str) -> None:
    try:
        with open(LIBCURL_STAMP) as f:
            if f.read() == prefix:
                return
    except OSError:
        pass
    os.makedirs(os.path.dirname(LIBCURL_STAMP), exist_ok=True)
    with open(LIBCURL_STAMP, "w") as f:
        f.write(prefix)


def _patches_define(prefix: str) -> list[str]:
    """The define that tells the extension which patches its libcurl carries.

    requestx.__libcurl__["patches"] must say what was linked, not what the checkout holds, so
    the list comes from the build-info.txt of the prefix being linked (its "patch NAME.patch
    HASH" lines: none for a stock build, REQUESTX_LIBCURL_PATCHES=0) and is compiled into the
    module as REQUESTX_LIBCURL_PATCHES, "name,name,..." (_core.pyx, libcurl_info). A generated
    Python module could be left behind by an older build or be missing from a wheel; the
    define cannot disagree with the binary it is in. The relink stamp (_note_libcurl_build)
    changes with the prefix, and so with the patch set, which rebuilds the module's sources.
    """
    names = []
    try:
        with open(os.path.join(prefix, "build-info.txt")) as f:
            for line in f:
                fields = line.split()
                if len(fields) >= 2 and fields[0] == "patch":
                    names.append(fields[1].removesuffix(".patch"))
    except OSError:
        pass  # a prefix made by hand, without build-info.txt: nothing is known to be patched
    return [f'-DREQUESTX_LIBCURL_PATCHES="{",".join(names)}"']


def _bundled_curl() -> tuple[list[str], list[str]]:
    """Flags for the pinned static libcurl that scripts/build_libcurl.sh builds (and caches)."""
    prefix = os.environ.get("REQUESTX_LIBCURL_PREFIX")
    if not prefix:
        script = os.path.join(HERE, "scripts", "build_libcurl.sh")
        if not os.path.exists(script):
            sys.exit(
                "requestx: scripts/build_libcurl.sh is missing; set REQUESTX_LIBCURL_PREFIX to a "
                "prefix it built, or REQUESTX_SYSTEM_LIBCURL=1 to link the system libcurl"
            )
        # Quick when the cache holds this build; otherwise it builds curl and nghttp2 (~40 s).
        result = subprocess.run(["bash", script], stdout=subprocess.PIPE, text=True)
        if result.returncode != 0:
            sys.exit("requestx: building the bundled libcurl failed (see the lines above)")
        prefix = result.stdout.strip().splitlines()[-1]
    link_file = os.path.join(prefix, "link-args.txt")
    if not os.path.exists(link_file):
        sys.exit(f"requestx: {prefix} holds no finished libcurl build (no link-args.txt)")
    with open(link_file) as f:
        archives = [line.strip() for line in f if line.strip()]
    # Defines that code including curl/curl.h needs with this build (Windows: static-library
    # defines, else the headers declare DLL imports); empty elsewhere.
    cflags_file = os.path.join(prefix, "cflags.txt")
    defines: list[str] = []
    if os.path.exists(cflags_file):
        with open(cflags_file) as f:
            defines = [line.strip() for line in f if line.strip()]
    if ASAN or os.environ.get("REQUESTX_ENGINE_HEAP") == "libc":
        # The engine's heap from the C library's malloc (csrc/heap.h): what the sanitizers
        # check, and the other side of a comparison with jemalloc.
        defines = [flag for flag in defines if flag != "-DRX_HEAP_JEMALLOC"]
    _note_libcurl_build(prefix)
    return [
        f"-I{prefix}/include",
        *defines,
        *_patches_define(prefix),
        *_decoder_cflags(archives),
    ], [
        *_export_only_init(),
        *archives,
    ]


# The static archives of the content codecs csrc/decode.c calls, by their file names in
# link-args.txt, each with a header to find beside it and the define that compiles it in.
# zlib is always there (libcurl is built with it everywhere); brotli and zstd are linked on
# every target but the MinGW cross-build (scripts/build_libcurl.sh --host x86_64-w64-mingw32),
# and decode.c is compiled without a coding whose library is not linked.
_CODECS = (
    ("z", "zlib.h", None),
    ("brotlidec", os.path.join("brotli", "decode.h"), "RX_DECODE_BROTLI"),
    ("zstd", "zstd.h", "RX_DECODE_ZSTD"),
)


def _decoder_cflags(archives: list[str]) -> list[str]:
    """csrc/decode.c's flags for the codec archives among `archives`: the defines of those
    linked, and the include directory beside each archive (DIR/lib/libX.a -> DIR/include) when
    that holds its header, so the headers match the archives (scripts/build_wheel_deps.sh's
    prefix); the system's archives use the compiler's own include path."""
    names = {}
    for path in archives:
        base = os.path.basename(path)
        for ext in (".a", ".lib"):
            if base.endswith(ext):
                names[base[: -len(ext)].removeprefix("lib")] = path
    flags: list[str] = []
    for name, header, define in _CODECS:
        path = names.get(name)
        if path is None:
            continue
        if define is not None:
            flags.append(f"-D{define}")
        include = os.path.join(os.path.dirname(os.path.dirname(path)), "include")
        if os.path.exists(os.path.join(include, header)) and include not in (
            "/usr/include",
            "/usr/local/include",
        ):
            flags.append(f"-I{include}")
    return list(dict.fromkeys(flags))


def _export_only_init() -> list[str]:
    """Linker flags: export PyInit__core and nothing else, and drop what nothing calls.

    Every other symbol is made local, those of the static archives included, so another
    extension in the same process (pycurl, curl_cffi, Python's own _ssl) keeps its own libcurl
    and OpenSSL. Dropping unreferenced sections (libcurl is built one section per function)
    takes curl_easy_perform out: the engine only drives the multi handle.
    """
    if MACOS:
        # ld64: an explicit export list, and dead stripping in place of --gc-sections.
        return ["-Wl,-exported_symbol,_PyInit__core", "-Wl,-dead_strip"]
    if WINDOWS:
        # A DLL exports what is marked dllexport (PyMODINIT_FUNC) and nothing else; link.exe
        # drops unreferenced functions by default (/OPT:REF without /DEBUG).
        return []
    # A version script, which GNU ld and lld (zig's, for scripts/build_wheel.sh --glibc) both
    # read; lld has no --exclude-libs through zig.
    return [f"-Wl,--version-script,{_exports_map()}", "-Wl,--gc-sections"]


def _exports_map() -> str:
    """A linker version script that exports the module's init function and nothing else."""
    path = os.path.join(HERE, "build", "_core.exports")
    text = "{\n  global: PyInit__core;\n  local: *;\n};\n"
    os.makedirs(os.path.dirname(path), exist_ok=True)
    try:
        with open(path) as f:
            if f.read() == text:
                return path
    except OSError:
        pass
    with open(path, "w") as f:
        f.write(text)
    return path


def _system_curl() -> tuple[list[str], list[str]]:
    """Flags for a system libcurl, from curl-config or pkg-config, refused below the floor."""
    for tool, cflags_args, libs_args, version_args in (
        (
            os.environ.get("REQUESTX_CURL_CONFIG", "curl-config"),
            ["--cflags"],
            ["--libs"],
            ["--version"],
        ),
        ("pkg-config", ["--cflags", "libcurl"], ["--libs", "libcurl"], ["--modversion", "libcurl"]),
    ):
        if shutil.which(tool) is None:
            continue
        try:
            cflags = subprocess.check_output([tool, *cflags_args], text=True)
            libs = subprocess.check_output([tool, *libs_args], text=True)
            version = subprocess.check_output([tool, *version_args], text=True).split()[-1]
        except (OSError, subprocess.CalledProcessError):
            continue
        found = tuple(int(part) for part in version.split("-")[0].split(".")[:3])
        if found < LIBCURL_FLOOR:
            floor = ".".join(map(str, LIBCURL_FLOOR))
            sys.exit(
                f"requestx: the system libcurl is {version}, older than {floor}, the oldest "
                "requestx supports (older ones have HTTP/2 bugs the engine no longer works "
                "around). Build the bundled libcurl instead: unset REQUESTX_SYSTEM_LIBCURL."
            )
        codec_cflags, codec_libs = _system_codecs()
        return shlex.split(cflags) + codec_cflags, shlex.split(libs) + codec_libs
    sys.exit(
        "requestx: REQUESTX_SYSTEM_LIBCURL=1 but no libcurl development files were found "
        "(no curl-config, no pkg-config libcurl). On Debian: apt-get install -y "
        "libcurl4-openssl-dev"
    )


def _system_codecs() -> tuple[list[str], list[str]]:
    """With a system libcurl, csrc/decode.c links the system's zlib, brotli and zstd, each
    found by pkg-config; zlib is required, a missing brotli or zstd leaves its coding out."""
    cflags: list[str] = []
    libs: list[str] = []
    for package, define in (("zlib", None), ("libbrotlidec", "RX_DECODE_BROTLI"),
                            ("libzstd", "RX_DECODE_ZSTD")):  # fmt: skip
        try:
            found_cflags = subprocess.check_output(["pkg-config", "--cflags", package], text=True)
            found_libs = subprocess.check_output(["pkg-config", "--libs", package], text=True)
        except (OSError, subprocess.CalledProcessError):
            if define is None:
                sys.exit(
                    "requestx: REQUESTX_SYSTEM_LIBCURL=1 needs zlib's development files, found "
                    "by pkg-config, for content decoding. On Debian: apt-get install -y "
                    "pkg-config zlib1g-dev libbrotli-dev libzstd-dev"
                )
            continue
        cflags += shlex.split(found_cflags) + ([f"-D{define}"] if define else [])
        libs += shlex.split(found_libs)
    return cflags, libs


DEBUG = _flag("REQUESTX_DEBUG")
ASAN = _flag("REQUESTX_ASAN")

SYSTEM_LIBCURL = _flag("REQUESTX_SYSTEM_LIBCURL") or "REQUESTX_CURL_CONFIG" in os.environ
curl_cflags, curl_libs = _system_curl() if SYSTEM_LIBCURL else _bundled_curl()
if WINDOWS:
    # clang-cl (BuildExt below) with MSVC-style options; the engine is plain C11 with the
    # __atomic builtins.
    compile_args = ["/std:c11", "/W3", "/O2", "/DNDEBUG"]
    link_args: list[str] = []
    # WaitOnAddress (the transfer latch) and Winsock (the platform layer's own sockets).
    engine_libs = ["synchronization.lib", "ws2_32.lib"]
else:
    # Hidden by default: the module exports PyInit__core and nothing else.
    compile_args = [
        "-std=c11",
        "-fvisibility=hidden",
        "-Wall",
        "-Wextra",
        "-Wno-unused-parameter",
        "-D_GNU_SOURCE",
    ]
    link_args = []
    engine_libs = ["-pthread"]
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
    # Every file of the engine: the platform layer's files compile to nothing off their own
    # platform (csrc/platform.h), so the list is the same everywhere.
    sources=["requestx/_core.pyx", "requestx/gil_probe.c", *sorted(glob.glob("csrc/*.c"))],
    include_dirs=["csrc", "requestx"],
    depends=[
        *sorted(glob.glob("csrc/*.h")),
        "requestx/_core.pxd",
        "requestx/gil_probe.h",
        *([] if SYSTEM_LIBCURL else [os.path.relpath(LIBCURL_STAMP, HERE)]),
    ],
    extra_compile_args=compile_args + [f for f in curl_cflags if f.startswith(("-I", "-D"))],
    extra_link_args=link_args + curl_libs + engine_libs,
)

# The client's hot path in Python objects (requestx/_hotpath.pyx) and the default-headers rule
# it shares with Request (requestx/_default_headers.pyx): compiled, with no C of their own and
# no libcurl.
hotpath = Extension(
    "requestx._hotpath",
    sources=["requestx/_hotpath.pyx"],
    depends=["requestx/_hotpath.pxd", "requestx/_default_headers.pxd"],
    extra_compile_args=compile_args,
    extra_link_args=link_args,
)
default_headers = Extension(
    "requestx._default_headers",
    sources=["requestx/_default_headers.pyx"],
    extra_compile_args=compile_args,
    extra_link_args=link_args,
)


class BuildExt(build_ext):
    """setuptools' build_ext, with clang-cl in place of MSVC's cl on Windows.

    The engine uses the __atomic builtins, which GCC and clang have and cl does not. clang-cl
    takes cl's options and writes MSVC-compatible objects; MSVC's link.exe still links. LLVM
    comes with GitHub's Windows images and Visual Studio's "C++ Clang tools" component.
    """

    def build_extensions(self) -> None:
        compiler = self.compiler
        if getattr(compiler, "compiler_type", "") == "msvc":
            if not getattr(compiler, "initialized", True):
                compiler.initialize()
            llvm = os.path.join(os.environ.get("PROGRAMFILES", r"C:\Program Files"), "LLVM", "bin")
            clang_cl = shutil.which("clang-cl") or shutil.which("clang-cl", path=llvm)
            if clang_cl is None:
                sys.exit(
                    "requestx: building on Windows needs clang-cl (LLVM): install LLVM "
                    "(winget install LLVM.LLVM) or Visual Studio's C++ Clang tools"
                )
            compiler.cc = clang_cl
        super().build_extensions()


try:
    from Cython.Build import cythonize
except ImportError:  # pragma: no cover - Cython is a build requirement
    sys.exit("requestx: Cython is needed to build from source: pip install 'Cython>=3.0'")

setup(
    cmdclass={"build_ext": BuildExt},
    ext_modules=cythonize(
        [ext, hotpath, default_headers],
        compiler_directives=directives,
        annotate=_flag("REQUESTX_ANNOTATE"),
        force=DEBUG or ASAN,
    ),
)
