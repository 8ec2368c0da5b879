"""The HTTP clients under comparison, each behind the same three calls.

Every driver does the work a user's code would do with that library: read the whole body, and
for JSON, decode it with what the library offers (`response.json()`; pycurl has no decoder, so
it uses the standard `json` module like a pycurl user would). Each call checks the status, so a
misconfigured run fails instead of measuring error pages.

`thread_safe` says whether one driver may be shared by many threads: requestx and httpx clients
are documented as thread-safe; a requests.Session is not guaranteed to be, and a pycurl easy
handle must never be used by two threads at once, so those get one driver per thread.
"""

from __future__ import annotations

import importlib
import io
import json
import urllib.parse
from types import ModuleType
from typing import Any, Callable

# The request body of the POST scenarios: 1024 bytes in compact JSON (httpx, orjson); requests
# encodes with spaces after separators, a few hundred bytes more.
POST_DOC: dict[str, Any] = {"user": "bench", "values": list(range(150)), "pad": ""}
POST_DOC["pad"] = "x" * (1024 - len(json.dumps(POST_DOC, separators=(",", ":"))))


class ClientUnavailable(Exception):
    """The library is not installed (or, for requestx, not built yet)."""


def require(module: str, missing: str = "") -> ModuleType:
    """`module` imported, or ClientUnavailable saying which library is missing: `missing`,
    else "<top-level package> is not installed"."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ClientUnavailable(missing or f"{module.split('.')[0]} is not installed") from exc


class Driver:
    name = ""
    thread_safe = False
    settings = ""  # how the client is made, as the library's own call (for the report)

    def get(self, url: str) -> bytes:
        raise NotImplementedError

    def get_json(self, url: str) -> Any:
        raise NotImplementedError

    def post_json(self, url: str, doc: Any) -> Any:
        raise NotImplementedError

    def post_form(self, url: str, fields: dict[str, str]) -> Any:
        """POST `fields` urlencoded; the JSON answer decoded."""
        raise NotImplementedError

    def close(self) -> None:
        pass


def fail(name: str, url: str, status: int) -> None:
    raise RuntimeError(f"{name}: {url} answered {status}")


class _SessionDriver(Driver):
    """requestx, httpx and requests share one call shape: `.get`/`.post(json=)` on a client or
    session, `status_code`, `content`, `json()`, `close()`. Subclasses only create `_client`."""

    _client: Any

    def get(self, url: str) -> bytes:
        response = self._client.get(url)
        if response.status_code != 200:
            fail(self.name, url, response.status_code)
        return response.content  # type: ignore[no-any-return]

    def get_json(self, url: str) -> Any:
        response = self._client.get(url)
        if response.status_code != 200:
            fail(self.name, url, response.status_code)
        return response.json()

    def post_json(self, url: str, doc: Any) -> Any:
        response = self._client.post(url, json=doc)
        if response.status_code != 200:
            fail(self.name, url, response.status_code)
        return response.json()

    def post_form(self, url: str, fields: dict[str, str]) -> Any:
        response = self._client.post(url, data=fields)
        if response.status_code != 200:
            fail(self.name, url, response.status_code)
        return response.json()

    def close(self) -> None:
        self._client.close()


class RequestxDriver(_SessionDriver):
    name = "requestx"
    thread_safe = True
    settings = "requestx.Client()"

    def __init__(self) -> None:
        try:
            import requestx

            self._client = requestx.Client()
        except (ImportError, AttributeError) as exc:
            raise ClientUnavailable(f"requestx is not built/importable yet ({exc})") from exc


class RequestxPerThreadDriver(RequestxDriver):
    """requestx with a Client per thread: each thread then drives its own engine, as the
    shared client's blocking lanes do within one client (docs/architecture.md, "Blocking
    lanes"). Shown beside the shared client, not counted as a peer."""

    name = "requestx-per-thread"
    thread_safe = False  # one driver, so one Client, per thread (workload.make_drivers)


class HttpxDriver(_SessionDriver):
    name = "httpx"
    thread_safe = True
    settings = "httpx.Client()"

    def __init__(self) -> None:
        httpx = require("httpx")
        self._client = httpx.Client()


class RequestsDriver(_SessionDriver):
    name = "requests"
    thread_safe = False  # a requests.Session is not guaranteed to be thread-safe
    settings = "requests.Session()"

    def __init__(self) -> None:
        requests = require("requests")
        self._client = requests.Session()


class PycurlDriver(Driver):
    """One reused easy handle: about the least Python can do per request through libcurl."""

    name = "pycurl"
    thread_safe = False
    settings = "pycurl.Curl() with NOSIGNAL"

    def __init__(self) -> None:
        pycurl = self._pycurl = require("pycurl")
        self._curl = pycurl.Curl()
        self._curl.setopt(pycurl.NOSIGNAL, 1)
        self._json_headers = ["Content-Type: application/json", "Expect:"]

    def _perform(self, url: str) -> bytes:
        curl, pycurl = self._curl, self._pycurl
        body = io.BytesIO()
        curl.setopt(pycurl.URL, url)
        curl.setopt(pycurl.WRITEDATA, body)
        curl.perform()
        status = curl.getinfo(pycurl.RESPONSE_CODE)
        if status != 200:
            fail(self.name, url, status)
        return body.getvalue()

    def get(self, url: str) -> bytes:
        self._curl.setopt(self._pycurl.HTTPGET, 1)
        return self._perform(url)

    def get_json(self, url: str) -> Any:
        return json.loads(self.get(url))

    def post_json(self, url: str, doc: Any) -> Any:
        curl, pycurl = self._curl, self._pycurl
        curl.setopt(pycurl.HTTPHEADER, self._json_headers)
        curl.setopt(pycurl.POSTFIELDS, json.dumps(doc, separators=(",", ":")))
        try:
            return json.loads(self._perform(url))
        finally:
            curl.setopt(pycurl.HTTPHEADER, [])

    def post_form(self, url: str, fields: dict[str, str]) -> Any:
        self._curl.setopt(self._pycurl.POSTFIELDS, urllib.parse.urlencode(fields))
        return json.loads(self._perform(url))

    def close(self) -> None:
        self._curl.close()


class NiquestsDriver(_SessionDriver):
    """niquests: requests' API on its own connection layer (urllib3-future)."""

    name = "niquests"
    thread_safe = False  # as requests.Session
    settings = "niquests.Session()"

    def __init__(self) -> None:
        niquests = require("niquests")
        self._client = niquests.Session()


class CurlCffiDriver(_SessionDriver):
    """curl_cffi's requests-like Session: libcurl (curl-impersonate's build) through cffi."""

    name = "curl_cffi"
    thread_safe = False  # a Session wraps one curl easy handle
    settings = "curl_cffi.requests.Session()"

    def __init__(self) -> None:
        self._client = require("curl_cffi.requests").Session()


class Urllib3Driver(Driver):
    """One urllib3.PoolManager (thread-safe); JSON with the standard json module, as
    urllib3's own `response.json()` does."""

    name = "urllib3"
    thread_safe = True
    settings = "urllib3.PoolManager(maxsize=256)"

    def __init__(self) -> None:
        self._pool = require("urllib3").PoolManager(maxsize=256)

    def _request(self, method: str, url: str, **options: Any) -> Any:
        response = self._pool.request(method, url, **options)
        if response.status != 200:
            fail(self.name, url, response.status)
        return response

    def get(self, url: str) -> bytes:
        return self._request("GET", url).data  # type: ignore[no-any-return]

    def get_json(self, url: str) -> Any:
        return self._request("GET", url).json()

    def post_json(self, url: str, doc: Any) -> Any:
        return self._request("POST", url, json=doc).json()

    def post_form(self, url: str, fields: dict[str, str]) -> Any:
        return self._request("POST", url, fields=fields, encode_multipart=False).json()

    def close(self) -> None:
        self._pool.clear()


class PyreqwestDriver(Driver):
    """pyreqwest's blocking client, `SyncClientBuilder().build()`: Rust reqwest on pyreqwest's
    tokio runtime, which a blocking call waits on with the GIL released. One SyncClient is
    shared by all threads (pyreqwest documents `SyncClient` as thread-safe: "multiple
    requests can be started by different threads concurrently"). Its pool is reqwest's
    default, which is the right size for any number of threads: `max_connections` (requests in
    flight) unlimited and every idle connection kept (`pool_max_idle_per_host` unlimited), so
    N threads keep N connections open. Bodies are read whole (`bytes()`); JSON is encoded and
    decoded by pyreqwest itself (`body_json()`, `json()`: serde, in Rust)."""

    name = "pyreqwest"
    thread_safe = True
    settings = "pyreqwest.client.SyncClientBuilder().build()"

    def __init__(self) -> None:
        client = require(
            "pyreqwest.client", "pyreqwest is not installed (pip install pyreqwest; Python >= 3.11)"
        )
        self._client = client.SyncClientBuilder().build()

    def _send(self, builder: Any, url: str) -> Any:
        response = builder.build().send()
        if response.status != 200:
            fail(self.name, url, response.status)
        return response

    def get(self, url: str) -> bytes:
        return self._send(self._client.get(url), url).bytes()  # type: ignore[no-any-return]

    def get_json(self, url: str) -> Any:
        return self._send(self._client.get(url), url).json()

    def post_json(self, url: str, doc: Any) -> Any:
        return self._send(self._client.post(url).body_json(doc), url).json()

    def post_form(self, url: str, fields: dict[str, str]) -> Any:
        return self._send(self._client.post(url).form(fields), url).json()

    def close(self) -> None:
        self._client.close()


DRIVERS: dict[str, Callable[[], Driver]] = {
    "requestx": RequestxDriver,
    "requestx-per-thread": RequestxPerThreadDriver,
    "httpx": HttpxDriver,
    "requests": RequestsDriver,
    "pycurl": PycurlDriver,
    "urllib3": Urllib3Driver,
    "curl_cffi": CurlCffiDriver,
    "niquests": NiquestsDriver,
    "pyreqwest": PyreqwestDriver,
}
