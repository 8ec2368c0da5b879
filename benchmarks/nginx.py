"""Run Debian's nginx as the benchmark server: a child process, loopback only, a free port.

nginx answers from memory (`return 200 '...'`), so a request costs the server a few microseconds
and the benchmark measures the clients, not the server. `worker_processes 1` leaves the other
core of a 2-core machine to the client.

    with Nginx() as server:
        server.url + "/get"

Routes:
    /get      small text ("Hello, world!")
    /json100  a JSON document of 100 bytes
    /json1k   a JSON document of 1024 bytes
    /post     accepts a body up to 1 MiB, answers {"ok":true}
    /big      1 MiB of bytes, from a file (for streams read in part, downloads)
    /big8m    8 MiB of the same bytes: more than a stream buffers before it pauses, so a stream
              left unread keeps its connection busy
    /json1m   a JSON document of 1 MiB, from a file
    /status   nginx's stub_status (active connections: handy to check keep-alive)
    /encoded/NAME
              with `Nginx(encoded={NAME: (coding, data)})`: `data` as it is, sent with
              `Content-Encoding: coding` (tests: a compressed body nginx did not compress)

HTTP/2, opt-in (`Nginx(http2=True)`, for benchmarks/run_h2.py): two more servers with the same
routes, `tls_url` (TLS, ALPN h2 or http/1.1) and `h2c_url` (cleartext HTTP/2 with prior
knowledge only). Their certificate is issued at start-up by a throw-away CA (trustme) whose PEM
file is `ca_file`; `url` stays plain HTTP/1.1, and the way to read `/status` and
`accepted_connections()`.

Thousands of connections (`Nginx(connections=10_000)`, compare.py's scale cells): when the
default worker_connections (1,024) is not enough, it becomes the number asked plus an eighth
plus 64 (`headroom`: the listening sockets and /status reads take slots too, and once fewer
than a sixteenth of its slots are free nginx closes idle keep-alive connections to make room,
which a client sees as a connection closed without an answer); worker_rlimit_nofile is that
plus fdlimit.RESERVE, and the plain port's listen backlog min(connections, somaxconn), so
thousands of clients connecting at once are not dropped to SYN retries. nginx inherits the
open-file limit of this process, which start() first raises to its hard limit; when even
that is too low, start() says so and by how much instead of letting nginx fail with "Too many
open files". `limits` records what was set.

Everything nginx writes (config, pid, error log, temp dirs, certificates) goes into a fresh
directory under benchmarks/.run/, removed when the server stops.
"""

from __future__ import annotations

import atexit
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path
from types import TracebackType

from fdlimit import needed, raise_open_files, shortfall

NGINX = os.environ.get("REQUESTX_BENCH_NGINX", "/usr/sbin/nginx")
RUN_ROOT = Path(__file__).resolve().parent / ".run"
LOOPBACK = "127.0.0.1"
DEFAULT_CONNECTIONS = 1024  # nginx's worker_connections unless Nginx(connections=) asks more
LISTEN_BACKLOG = 511  # nginx's default on Linux


def _document(size: int) -> str:
    """A deterministic JSON object of exactly `size` bytes (size >= 64), with no `$` or `'`
    (nginx would read `$` as a variable, and `'` would end the quoted string)."""
    items: list[dict[str, object]] = []
    doc: dict[str, object] = {"id": 12345, "name": "requestx benchmark", "ok": True}
    doc["items"] = items
    doc["pad"] = ""

    def encoded() -> str:
        return json.dumps(doc, separators=(",", ":"))

    while True:
        n = len(items)
        items.append({"n": n, "word": f"item-{n:04d}", "v": n * 0.5})
        if len(encoded()) > size:
            items.pop()
            break
    doc["pad"] = "x" * (size - len(encoded()))
    return encoded()


def _large_document(size: int) -> bytes:
    """A JSON document of exactly `size` bytes (records, then padding), built in one pass."""
    items, length = [], len('{"items":[],"pad":""}')
    n = 0
    while True:
        item = json.dumps({"n": n, "word": f"item-{n:06d}", "v": n * 0.5}, separators=(",", ":"))
        if length + len(item) + 1 > size:
            break
        items.append(item)
        length += len(item) + (1 if n else 0)
        n += 1
    head = '{"items":[' + ",".join(items) + '],"pad":"'
    return (head + "x" * (size - len(head) - 2) + '"}').encode()


JSON_100 = _document(100)
JSON_1K = _document(1024)

_LOCATIONS = """\
        location = /get {{
            default_type text/plain;
            return 200 'Hello, world!';
        }}
        location = /json100 {{
            default_type application/json;
            return 200 '{json100}';
        }}
        location = /json1k {{
            default_type application/json;
            return 200 '{json1k}';
        }}
        location = /post {{
            # `return` makes nginx read and discard the request body before answering, so the
            # connection stays usable for the next request.
            default_type application/json;
            return 200 '{{"ok":true}}';
        }}
        location = /json1m {{
            default_type application/json;
            alias {run}/json1m.json;
        }}
        location = /big {{
            default_type application/octet-stream;
            alias {run}/big.bin;
        }}
        location = /big8m {{
            default_type application/octet-stream;
            alias {run}/big8m.bin;
        }}
        location = /status {{
            stub_status;
        }}
        location / {{
            return 404;
        }}
"""

_ENCODED_LOCATION = """\
        location = /encoded/{name} {{
            default_type application/octet-stream;
            add_header Content-Encoding {coding};
            alias {run}/encoded-{name};
        }}
"""

_CONFIG = """\
# generated by benchmarks/nginx.py
{user}
worker_processes 1;
daemon off;
pid {run}/nginx.pid;
error_log {run}/error.log warn;
{rlimit}\
events {{
    worker_connections {worker_connections};
}}
http {{
    {access_log}
    server_tokens off;
    # keep-alive for the whole run: the benchmark measures requests, not handshakes
    # (for HTTP/2 too: since nginx 1.19.7 these two also bound HTTP/2 connections)
    keepalive_requests 1000000;
    keepalive_timeout {keepalive_timeout};
    client_body_temp_path {run}/body;
    proxy_temp_path {run}/proxy;
    fastcgi_temp_path {run}/fastcgi;
    uwsgi_temp_path {run}/uwsgi;
    scgi_temp_path {run}/scgi;
    client_max_body_size 1m;
    client_body_buffer_size 1m;
{http2}\
    server {{
        listen {host}:{port}{backlog};
{locations}\
    }}
{servers}\
}}
"""

# Only with Nginx(http2=True). `listen ... http2` is nginx 1.22's (Debian 12) way to say it.
_HTTP2 = """\
    http2_max_concurrent_streams {max_streams};
    ssl_protocols TLSv1.2 TLSv1.3;
"""

_HTTP2_SERVERS = """\
    server {{
        # TLS: ALPN offers h2 and http/1.1
        listen {host}:{tls_port} ssl http2;
        ssl_certificate {run}/server.pem;
        ssl_certificate_key {run}/server.key;
{locations}\
    }}
    server {{
        # cleartext HTTP/2, prior knowledge only (no HTTP/1.1 on this port)
        listen {host}:{h2c_port} http2;
{locations}\
    }}
"""


def headroom(connections: int) -> int:
    """worker_connections for `connections` clients: nginx starts closing idle keep-alive
    connections ("worker_connections are not enough, reusing connections") once fewer than
    1/16 of its slots are free, and its listening sockets take slots too."""
    return connections + connections // 8 + 64


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((LOOPBACK, 0))
        return int(sock.getsockname()[1])


class Nginx:
    """nginx as a child process; `stop()` (or leaving the `with`, or exit) ends it."""

    def __init__(
        self,
        nginx: str = NGINX,
        *,
        http2: bool = False,
        log: bool = False,
        max_streams: int = 256,
        encoded: dict[str, tuple[str, bytes]] | None = None,
        keepalive_timeout: str = "300s",
        connections: int = 0,
    ) -> None:
        self.nginx = nginx
        # Client connections the server must hold at once (benchmarks/compare.py's scale cells:
        # 10,000); 0: nginx's usual 1,024 slots, plenty for the other benchmarks. Beyond them,
        # start() raises the open-file limit nginx inherits, sets worker_rlimit_nofile, and
        # lengthens the listen backlog: see `limits`.
        self.connections = connections
        # How long nginx keeps an idle connection open (nginx's syntax: "300s", "200ms").
        self.keepalive_timeout = keepalive_timeout
        self.encoded = dict(encoded or {})  # /encoded/NAME -> (Content-Encoding, body)
        self.max_streams = max_streams  # HTTP/2 streams a connection may carry at once
        self.http2 = http2  # also serve HTTP/2: over TLS (tls_url) and cleartext (h2c_url)
        self.log = log  # write each request's URI to a log: see requested_uris()
        self.port = 0
        self.tls_port = 0  # with http2 only
        self.h2c_port = 0  # with http2 only
        self.run_dir: Path | None = None
        self._process: subprocess.Popen[bytes] | None = None
        self._status_reads = 0  # /status reads made: a connection and a request each
        self.limits: dict[str, int] = {}  # what start() set: worker_connections and the rest

    @property
    def url(self) -> str:
        """Plain HTTP/1.1."""
        return f"http://{LOOPBACK}:{self.port}"

    @property
    def tls_url(self) -> str:
        """HTTPS (ALPN h2 or http/1.1), certificate issued by `ca_file`; with http2 only."""
        self._need_http2()
        return f"https://{LOOPBACK}:{self.tls_port}"

    @property
    def h2c_url(self) -> str:
        """Cleartext HTTP/2 with prior knowledge (HTTP/1.1 requests fail); with http2 only."""
        self._need_http2()
        return f"http://{LOOPBACK}:{self.h2c_port}"

    @property
    def ca_file(self) -> str:
        """PEM file of the CA that issued tls_url's certificate: what a client must trust."""
        self._need_http2()
        assert self.run_dir is not None, "not started"
        return str(self.run_dir / "ca.pem")

    def accepted_connections(self) -> int:
        """nginx's count of connections accepted since it started (stub_status "accepts", every
        server and protocol), less the ones this object opened to read /status (one a read,
        this one included). The difference between two calls is then exactly the connections
        others opened in between."""
        accepts, _ = self._read_status()
        return accepts - self._status_reads

    def handled_requests(self) -> int:
        """nginx's count of requests answered since it started (stub_status "requests", every
        server and protocol), less this object's /status reads (this one included)."""
        _, requests = self._read_status()
        return requests - self._status_reads

    def requested_uris(self) -> list[str]:
        """With log=True: the request URI of every request answered so far, in order (nginx
        writes each as it finishes, unbuffered)."""
        assert self.log and self.run_dir is not None, "needs Nginx(log=True), started"
        log = self.run_dir / "access.log"
        return log.read_text().splitlines() if log.exists() else []

    def _read_status(self) -> tuple[int, int]:
        """(accepts, requests) from stub_status; counts this read in _status_reads."""
        self._status_reads += 1
        with urllib.request.urlopen(self.url + "/status", timeout=5) as response:
            text = response.read().decode()
        # Active connections: 1
        # server accepts handled requests
        #  5 5 17
        match = re.search(r"accepts handled requests\s+(\d+)\s+\d+\s+(\d+)", text)
        if match is None:
            raise RuntimeError(f"unexpected stub_status answer: {text!r}")
        return int(match.group(1)), int(match.group(2))

    def start(self, timeout: float = 10.0) -> None:
        if not (os.path.isfile(self.nginx) and os.access(self.nginx, os.X_OK)):
            raise RuntimeError(
                f"nginx not found at {self.nginx}; install it with "
                "`apt-get install -y nginx-light` or set REQUESTX_BENCH_NGINX"
            )
        self._plan_limits()
        RUN_ROOT.mkdir(exist_ok=True)
        self.run_dir = Path(tempfile.mkdtemp(prefix="nginx-", dir=RUN_ROOT))
        if self.http2:
            self._write_certificates()
        # A free port can be taken between our probe and nginx's bind: try a few.
        for _attempt in range(5):
            self.port = free_port()
            if self.http2:
                self.tls_port, self.h2c_port = free_port(), free_port()
            self._write_config()
            if self._spawn(timeout):
                atexit.register(self.stop)
                return
        raise RuntimeError(f"nginx did not start; see {self.run_dir}/error.log")

    def stop(self) -> None:
        process, self._process = self._process, None
        if process is not None and process.poll() is None:
            # SIGQUIT would wait for keep-alive clients; SIGTERM is nginx's fast shutdown and
            # the master takes its worker down with it.
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(5)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(5)
        if self.run_dir is not None:
            shutil.rmtree(self.run_dir, ignore_errors=True)
            self.run_dir = None

    def version(self) -> str:
        out = subprocess.run([self.nginx, "-v"], capture_output=True, text=True, check=False)
        return out.stderr.strip().replace("nginx version: ", "")

    def __enter__(self) -> Nginx:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    # --- internals --------------------------------------------------------------------------

    def _need_http2(self) -> None:
        if not self.http2:
            raise RuntimeError("this nginx serves HTTP/1.1 only: start it with Nginx(http2=True)")

    def _plan_limits(self) -> None:
        """worker_connections for `connections` clients (and the listening sockets and status
        reads, which take slots too); above the default, the open-file limit nginx needs
        (raised in this process to its hard limit first: nginx inherits it) and a backlog long
        enough for thousands of clients connecting at once (the kernel caps it at somaxconn)."""
        self.limits = {"worker_connections": DEFAULT_CONNECTIONS}
        worker_connections = headroom(self.connections)
        if worker_connections <= DEFAULT_CONNECTIONS:
            return
        self.limits["worker_connections"] = worker_connections
        open_files = raise_open_files()
        what = f"its worker_connections {worker_connections:,}"
        problem = shortfall(worker_connections, open_files, what)
        if problem is not None:
            raise RuntimeError(f"nginx cannot hold {self.connections:,} connections: {problem}")
        try:
            somaxconn = int(Path("/proc/sys/net/core/somaxconn").read_text())
        except (OSError, ValueError):
            somaxconn = 4096
        self.limits.update(
            worker_rlimit_nofile=needed(worker_connections),
            listen_backlog=max(LISTEN_BACKLOG, min(self.connections, somaxconn)),
            open_files_soft=open_files.soft,
            open_files_hard=open_files.hard,
        )

    def _write_certificates(self) -> None:
        """A fresh CA and a leaf for 127.0.0.1 and localhost, as PEM files in the run dir."""
        assert self.run_dir is not None
        try:
            import trustme
        except ImportError as exc:
            raise RuntimeError(
                "Nginx(http2=True) needs trustme for its certificate (pip install trustme)"
            ) from exc
        ca = trustme.CA()
        leaf = ca.issue_cert(LOOPBACK, "localhost")
        ca.cert_pem.write_to_path(str(self.run_dir / "ca.pem"))
        leaf.private_key_pem.write_to_path(str(self.run_dir / "server.key"))
        with open(self.run_dir / "server.pem", "wb") as chain:
            for blob in leaf.cert_chain_pems:
                chain.write(blob.bytes())

    def _write_config(self) -> None:
        assert self.run_dir is not None
        # As root, nginx's workers would switch to `nobody`, who cannot enter our 0700 run
        # directory. The server only listens on loopback for the length of a benchmark, so the
        # workers keep our user. As non-root, nginx cannot switch users and ignores `user`.
        user = "user root root;" if os.geteuid() == 0 else ""
        (self.run_dir / "big.bin").write_bytes(bytes(range(256)) * 4096)
        (self.run_dir / "big8m.bin").write_bytes(bytes(range(256)) * 4096 * 8)
        (self.run_dir / "json1m.json").write_bytes(_large_document(1 << 20))
        locations = _LOCATIONS.format(json100=JSON_100, json1k=JSON_1K, run=self.run_dir)
        for name, (coding, data) in self.encoded.items():
            (self.run_dir / f"encoded-{name}").write_bytes(data)
            locations += _ENCODED_LOCATION.format(name=name, coding=coding, run=self.run_dir)
        servers = ""
        if self.http2:
            servers = _HTTP2_SERVERS.format(
                host=LOOPBACK,
                tls_port=self.tls_port,
                h2c_port=self.h2c_port,
                run=self.run_dir,
                locations=locations,
            )
        config = _CONFIG.format(
            user=user,
            run=self.run_dir,
            host=LOOPBACK,
            port=self.port,
            locations=locations,
            http2=_HTTP2.format(max_streams=self.max_streams) if self.http2 else "",
            access_log=(
                f"log_format uri '$request_uri';\n    access_log {self.run_dir}/access.log uri;"
                if self.log
                else "access_log off;"
            ),
            servers=servers,
            keepalive_timeout=self.keepalive_timeout,
            worker_connections=self.limits["worker_connections"],
            rlimit=(
                f"worker_rlimit_nofile {self.limits['worker_rlimit_nofile']};\n"
                if "worker_rlimit_nofile" in self.limits
                else ""
            ),
            backlog=(
                f" backlog={self.limits['listen_backlog']}"
                if "listen_backlog" in self.limits
                else ""
            ),
        )
        (self.run_dir / "nginx.conf").write_text(config)

    def _spawn(self, timeout: float) -> bool:
        """Start nginx and wait until it answers; False if it exited (port taken, ...)."""
        assert self.run_dir is not None
        conf = self.run_dir / "nginx.conf"
        # -e: the error log from before the config is read (else /var/log/nginx/error.log,
        # which a non-root user cannot open); -p: relative paths resolve in the run dir.
        command = [self.nginx, "-p", str(self.run_dir), "-c", str(conf), "-e", "stderr"]
        # If we die without running stop() (SIGKILL, a crash), the kernel sends nginx SIGTERM:
        # setpriv sets the parent-death signal, which survives its exec of nginx. (It fires when
        # the *thread* that started nginx ends, so start it from a long-lived thread.)
        setpriv = shutil.which("setpriv")
        if setpriv is not None:
            command = [setpriv, "--pdeathsig", "TERM", "--", *command]
        log = open(self.run_dir / "stderr.log", "wb")  # noqa: SIM115 - owned by the child
        with log:
            self._process = subprocess.Popen(
                command, stdin=subprocess.DEVNULL, stdout=log, stderr=log
            )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                self._process = None
                return False
            try:
                with urllib.request.urlopen(self.url + "/get", timeout=1) as response:
                    if response.read() == b"Hello, world!":
                        return True
            except OSError:
                time.sleep(0.02)
        self.stop()
        raise RuntimeError(f"nginx did not answer within {timeout} s")


if __name__ == "__main__":  # manual check: python benchmarks/nginx.py [--http2] [--connections N]
    import sys

    arguments = sys.argv[1:]
    wanted = 0
    if "--connections" in arguments:
        wanted = int(arguments[arguments.index("--connections") + 1])
    with Nginx(http2="--http2" in arguments, connections=wanted) as running:
        print(f"nginx {running.version()} serving {running.url} (Ctrl-C to stop)")
        if running.http2:
            print(f"HTTP/2: {running.tls_url} (CA {running.ca_file}), h2c {running.h2c_url}")
        print(f"json100: {len(JSON_100)} bytes, json1k: {len(JSON_1K)} bytes; {running.limits}")
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass
