"""Every file and function the documentation names exists in the repository.

Scanned: README.md, docs/*.md and benchmarks/README.md (whole text), and the docstrings and
comments of requestx/*.py, *.pyx, *.pxd, *.pyi and *.c/*.h, and of csrc/*.c and *.h. Checked:

* paths into the repository (`requestx/_client.py`, `csrc/engine.c`, `scripts/bench.sh`,
  `benchmarks/compare.py`, `docs/architecture.md`, ...) and bare file names (`_core.pyx`,
  `origin.c`, `curl-0016-idle-connections-ahead.patch`), which must name a file somewhere in
  the repository;
* names written as functions (`name()`, `name(args)`) or dotted (`Engine.perform`,
  `_hotpath.send_plain`): the last part must be defined in the source of requestx/,
  csrc/, scripts/ (the libcurl patches included), benchmarks/, tests/ or setup.py: a `def`, a
  `class`, a `cdef`/`cpdef` function or attribute, a C function, macro, field or enum
  member, an assignment, or a module of that name;
* other backticked snake_case names (`rx_transfer_new`, `header_marks`, `wake_owed`) in the
  documents: they must occur in that source.

Paths under tests/ are resolved loosely: `tests/test_x.py` (or `tests/c/x.c`) counts as
existing when a file of that name exists anywhere under tests/, since tests move between
subfolders (tests/unit/, tests/client/, ...) without the documents having to follow.

Names that belong to other projects (libcurl, CPython, the C library, httpx, the event loops)
are listed in the allowlists below, each group with what it is.
"""

from __future__ import annotations

import ast
import builtins
import io
import os
import re
import tokenize
from functools import cache
from pathlib import Path

THIS_FILE = Path(__file__).resolve()
# The repository's root, wherever under tests/ this file sits.
ROOT = next(path for path in THIS_FILE.parents if (path / "pyproject.toml").is_file())

DOCUMENTS = ("README.md", "docs/*.md", "benchmarks/README.md")
COMMENTED_CODE = (
    "requestx/*.py",
    "requestx/*.pyx",
    "requestx/*.pxd",
    "requestx/*.pyi",
    "requestx/*.c",
    "requestx/*.h",
    "csrc/*.c",
    "csrc/*.h",
)
SOURCE_DIRECTORIES = ("requestx", "csrc", "scripts", "benchmarks", "tests")
SOURCE_SUFFIXES = {".py", ".pyx", ".pxd", ".pyi", ".c", ".h", ".sh", ".patch"}
SKIPPED_DIRECTORIES = {"__pycache__", "build", "results", "node_modules"}

FILE_SUFFIXES = "py|pyx|pxd|pyi|c|h|sh|md|txt|patch|toml"
TOP_DIRECTORIES = "requestx|csrc|scripts|benchmarks|tests|docs"
# `csrc/engine.c`, `tests/c/engine_test.c`: not inside a longer path (`/tmp/x/requestx/a.py`).
PATH = re.compile(rf"(?<![\w./~-])((?:{TOP_DIRECTORIES})/[\w./-]*?\w\.(?:{FILE_SUFFIXES}))\b")
# `_core.pyx`, `origin.c`, `curl-0016-idle-connections-ahead.patch`.
BARE_FILE = re.compile(r"(?<![\w./~-])([A-Za-z_][\w-]*\.(?:py|pyx|pxd|pyi|c|h|sh|patch))\b(?![/-])")
INLINE_CODE = re.compile(r"`([^`\n]+)`")
FENCE = re.compile(r"^```.*?^```", re.M | re.S)
IDENTIFIER = r"[A-Za-z_]\w*"
CALL = re.compile(rf"^({IDENTIFIER}(?:\.{IDENTIFIER})*)\([^()]*\)$")
DOTTED = re.compile(rf"^{IDENTIFIER}(?:\.{IDENTIFIER})+$")
SNAKE = re.compile(r"^(?:[a-z_][a-z0-9]*_[a-z0-9_]*|RX_[A-Z0-9_]+)$")
# In comments, a name followed by `()` is a function whoever wrote it, backticks or not.
BARE_CALL = re.compile(rf"(?<![\w.])({IDENTIFIER}(?:\.{IDENTIFIER})*)\(\)")
# The engine's own C names (rx_transfer_new, RX_E_CANCELLED), backticked or not; not a
# prefix that stands for a family (`rx_transfer_set_*`, `RX_E_*`).
OWN_C_NAME = re.compile(r"\b((?:rx|RX)_\w*[A-Za-z0-9])\b(?![*])")

# ---- Allowlists: names that live outside this repository. ----

# Files of other projects that the text names as theirs.
EXTERNAL_FILES = {
    # libcurl's sources (lib/): where a behaviour the engine meets is implemented
    "conncache.c",
    "http2.c",
    "multi.c",
    "url.c",
    # the version headers of the bundled libraries, read to check a source tree's version
    "curlver.h",
    "version.h",  # brotli's
    "zlib.h",
    "zstd.h",
    # httpx's own test suite (docs/differences.md: where it fails against requestx, and why)
    "test_api.py",
    "test_asgi.py",
    "test_auth.py",
    "test_client.py",
    "test_content.py",
    "test_event_hooks.py",
    "test_main.py",
    "test_url.py",
}

# Modules, objects and namespaces of other projects: a dotted name starting with one of these
# (`asyncio.current_task`, `loop.add_reader`, `trio.lowlevel.wait_readable`) is theirs.
EXTERNAL_PREFIXES = {
    "aiohttp",
    "anyio",
    "asyncio",
    "curl_cffi",
    "http",  # http.cookiejar, and ASGI's "http.*" message types
    "httpx",
    "inspect",
    "ipaddress",
    "json",
    "loop",  # an asyncio event loop
    "niquests",
    "orjson",
    "os",
    "pycurl",
    "pyreqwest",
    "requests",
    "socket",
    "ssl",
    "sys",
    "time",
    "trio",
    "typing",
    "urllib3",
    "uvloop",
    "weakref",
    "zlib",
}

# Name families of other projects: libcurl's API and internals (curl_multi_perform,
# Curl_cpool_find, curlx_dyn_addn, CURLOPT_*) and CPython's C API and internals
# (PyEval_SaveThread, _PyRuntime). requestx's own C names start with rx_ or RX_.
EXTERNAL_NAME_PREFIXES = ("curl_", "Curl_", "curlx_", "CURL", "Py", "_Py")

# Single names that belong to other projects.
EXTERNAL_NAMES = {
    # the C library, POSIX and the operating systems
    "epoll_wait",
    "explicit_bzero",
    "fcntl",
    "getrusage",
    "poll",
    "sched_yield",
    "select",
    "setsockopt",
    "socketpair",
    "strerror",
    # zlib's API (csrc/decode.c)
    "inflate",
    # CPython's GIL internals (Python/ceval_gil.c)
    "drop_gil",
    "take_gil",
    # pyreqwest's client builder (benchmarks/README.md: how it is forced to HTTP/2) and its
    # request builder's bodies (benchmarks/README.md: its blocking driver)
    "http2_prior_knowledge",
    "body_json",
    "form",
    # a wheel's platform tag (docs/wheels.md)
    "macosx_arm64",
    # `codes.not_found`: one of the lower-case aliases _status_codes.py makes with setattr
    "not_found",
    # httpx's private method and test names (docs/differences.md: httpx's own suite)
    "_redirect_headers",
    "test_asgi_headers",
    "test_is_https_redirect",
    "test_is_not_https_redirect",
    "test_is_not_https_redirect_if_not_default_ports",
    "test_not_same_origin",
    "test_proxies_environ",
    "test_same_origin",
    "test_socks_proxy",
    "test_transport_for_request",
}


# Python's builtins and the methods of its builtin types (`bool()`, `str.splitlines()`).
PYTHON_BUILTINS = frozenset(
    name
    for namespace in (builtins, str, bytes, bytearray, dict, list, set, int, memoryview)
    for name in dir(namespace)
)

# A dotted name ending in one of these is a file of another kind (`openssl.cnf`, `link.exe`).
OTHER_FILE_SUFFIXES = {"cnf", "conf", "dat", "dll", "exe", "json", "lib", "so", "whl", "yml"}


# ---- What the repository has. ----


@cache
def repository_files() -> tuple[Path, ...]:
    """Every file of the working tree, without hidden directories (.git, .venv) and build
    output."""
    files = []
    for directory, subdirectories, names in os.walk(ROOT):
        subdirectories[:] = [
            name
            for name in subdirectories
            if not name.startswith(".") and name not in SKIPPED_DIRECTORIES
        ]
        files += [Path(directory, name) for name in names]
    return tuple(files)


@cache
def file_names() -> frozenset[str]:
    return frozenset(path.name for path in repository_files())


@cache
def names_under_tests() -> frozenset[str]:
    tests = ROOT / "tests"
    return frozenset(path.name for path in repository_files() if tests in path.parents)


@cache
def repository_paths() -> frozenset[str]:
    return frozenset(path.relative_to(ROOT).as_posix() for path in repository_files())


def path_exists(reference: str) -> bool:
    # Only files the walk keeps count: a report under benchmarks/results/ or a build output
    # exists on the machine that made it, never in a clean clone.
    if reference.startswith("tests/"):
        return Path(reference).name in names_under_tests()
    return reference in repository_paths()


@cache
def source_text() -> str:
    chunks = []
    for path in repository_files():
        top = path.relative_to(ROOT).parts[0]
        inside = top in SOURCE_DIRECTORIES or path.name == "setup.py"
        if inside and path.suffix in SOURCE_SUFFIXES and path != THIS_FILE:
            chunks.append(path.read_text(errors="replace"))
    return "\n".join(chunks)


DEFINITIONS = (
    re.compile(rf"\b(?:def|class)\s+({IDENTIFIER})"),
    re.compile(rf"\bc(?:p)?def\b[^\n(=:#]*?\b({IDENTIFIER})\s*\("),  # cdef/cpdef functions
    re.compile(rf"\bcdef\b[^\n(=:#]*?\b({IDENTIFIER})\s*(?:=|#|$)", re.M),  # cdef attributes
    # C functions, definitions and prototypes, at the start of a line (a patch's too)
    re.compile(rf"^[+\- ]?(?:{IDENTIFIER}[\s*]+)+\**({IDENTIFIER})\s*\(", re.M),
    re.compile(rf"#\s*define\s+({IDENTIFIER})"),
    re.compile(rf"\b({IDENTIFIER})\s*(?::[^=\n]*)?=(?!=)"),  # assignments, enum members
    re.compile(rf"^\s+[\w\s*]+?\b({IDENTIFIER})\s*(?:\[[^\]]*\])?\s*;", re.M),  # C fields
    re.compile(rf"^}}\s*({IDENTIFIER})\s*;", re.M),  # typedef struct { ... } name;
    re.compile(rf"\btypedef\s+(?:struct|union|enum)?\s*\w+\s+\**({IDENTIFIER})\s*;"),
    re.compile(rf"-D({IDENTIFIER})"),  # macros defined on a compile line (RX_DECODE_ZSTD)
)


@cache
def defined_names() -> frozenset[str]:
    text = source_text()
    names = {match for pattern in DEFINITIONS for match in pattern.findall(text)}
    names |= {path.stem for path in repository_files() if path.suffix in SOURCE_SUFFIXES}
    return frozenset(names)


@cache
def source_words() -> frozenset[str]:
    return frozenset(re.findall(IDENTIFIER, source_text()))


# ---- What the text names. ----


def document_texts() -> list[tuple[str, str, bool]]:
    """(where, text, is_markdown) for every scanned text."""
    texts = []
    for pattern in DOCUMENTS:
        for path in sorted(ROOT.glob(pattern)):
            texts.append((str(path.relative_to(ROOT)), path.read_text(), True))
    for pattern in COMMENTED_CODE:
        for path in sorted(ROOT.glob(pattern)):
            if path.read_text(errors="replace").startswith("/* Generated by Cython"):
                continue  # the build's output (_core.c from _core.pyx), not a source
            where = str(path.relative_to(ROOT))
            for line, comment in comments_of(path):
                texts.append((f"{where}:{line}", comment, False))
    return texts


def comments_of(path: Path) -> list[tuple[int, str]]:
    """(line, text) of each docstring and comment of a source file."""
    text = path.read_text()
    if path.suffix in {".c", ".h"}:
        pattern = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
        return [(text.count("\n", 0, m.start()) + 1, m.group()) for m in pattern.finditer(text)]
    if path.suffix == ".py":
        found = []
        for node in ast.walk(ast.parse(text)):
            body = getattr(node, "body", None)
            if isinstance(body, list) and body and isinstance(body[0], ast.Expr):
                value = body[0].value
                if isinstance(value, ast.Constant) and isinstance(value.value, str):
                    found.append((value.lineno, value.value))
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.COMMENT:
                found.append((token.start[0], token.string))
        return found
    # Cython and stubs: triple-quoted strings and comments (a `#` inside a one-line string
    # is rare enough in these files to read as a comment).
    pattern = re.compile(r'"""(.*?)"""|#[^\n]*', re.S)
    return [(text.count("\n", 0, m.start()) + 1, m.group()) for m in pattern.finditer(text)]


def is_external(name: str) -> bool:
    first, _, _ = name.partition(".")
    last = name.rsplit(".", 1)[-1]
    return (
        first in EXTERNAL_PREFIXES
        or last.startswith(EXTERNAL_NAME_PREFIXES)
        or last in EXTERNAL_NAMES
        or last in PYTHON_BUILTINS
        or last in OTHER_FILE_SUFFIXES
    )


def missing_names(where: str, text: str, is_markdown: bool) -> list[str]:
    problems = []
    for reference in sorted(set(PATH.findall(text))):
        if not path_exists(reference):
            problems.append(f"{where}: no file {reference}")
    for name in sorted(set(BARE_FILE.findall(PATH.sub(" ", text)))):
        if name not in file_names() and name not in EXTERNAL_FILES:
            problems.append(f"{where}: no file named {name}")

    prose = FENCE.sub(" ", text) if is_markdown else text
    functions = set()
    bare = set()
    for span in INLINE_CODE.findall(prose):
        span = span.strip()
        if re.search(rf"\.(?:{FILE_SUFFIXES})\b", span):
            continue  # a file name: checked above
        call = CALL.match(span)
        if call:
            functions.add(call.group(1))
        elif DOTTED.match(span):
            functions.add(span)
        elif is_markdown and SNAKE.match(span):
            bare.add(span)
    if not is_markdown and not where.split(":")[0].endswith(".py"):
        # C and Cython comments name functions as `name()` without backticks; Python
        # docstrings hold examples, whose calls are the example's own.
        functions |= set(BARE_CALL.findall(INLINE_CODE.sub(" ", prose)))
    functions |= set(OWN_C_NAME.findall(prose))
    for name in sorted(functions):
        if not is_external(name) and name.rsplit(".", 1)[-1] not in defined_names():
            problems.append(f"{where}: nothing defines {name}")
    for name in sorted(bare):
        if not is_external(name) and name not in source_words():
            problems.append(f"{where}: no {name} in the source")
    return problems


def test_every_named_file_and_function_exists() -> None:
    problems = [
        problem
        for where, text, is_markdown in document_texts()
        for problem in missing_names(where, text, is_markdown)
    ]
    assert not problems, "\n".join(problems)


def test_the_checks_catch_what_they_are_for() -> None:
    """A stale path, file name, function and identifier are each reported; real ones not."""
    text = (
        "See `requestx/_client.py`, `csrc/engine.c`, `tests/test_no_such_file.py`, "
        "`requestx/_proxy.py`, `_core.pyx`, `_gone.pyx`, `Engine.perform`, "
        "`_hotpath.no_such_step`, `rx_engine_submit()`, `rx_no_such_function()`, "
        "`rx_transfer_new`, `no_such_field`, `curl_multi_perform()`, rx_gone_function, "
        "`RX_E_*`, `rx_transfer_set_*()`, `rx_easy_kept`."
    )
    problems = missing_names("example", text, True)
    assert problems == [
        "example: no file requestx/_proxy.py",
        "example: no file tests/test_no_such_file.py",
        "example: no file named _gone.pyx",
        "example: nothing defines _hotpath.no_such_step",
        "example: nothing defines rx_gone_function",
        "example: nothing defines rx_no_such_function",
        "example: no no_such_field in the source",
    ]
