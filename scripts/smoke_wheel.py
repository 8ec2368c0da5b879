"""What a new user does first, against an installed requestx: a GET, a POST of JSON, HTTP/2 over
TLS and a streamed download, each from a server this script starts on loopback (the test
suite's ASGI app under hypercorn, with a certificate from a CA made here).

    python scripts/smoke_wheel.py        # run from a copy of the repository's tests/

Needs hypercorn and trustme, and tests/ beside it (scripts/check_clean_room.sh copies both).
Prints one line per check and "smoke: ok"; exits non-zero on the first failure.
"""

from __future__ import annotations

import asyncio
import hashlib
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import requestx  # noqa: E402
from tests.servers import HypercornServer  # noqa: E402
from tests.servers.app import pattern_bytes  # noqa: E402
from tests.support.tls import TLSFiles  # noqa: E402


def main() -> None:
    where = Path(requestx.__file__).resolve().parent
    print(f"smoke: requestx {requestx.__version__} from {where}")
    print(f"smoke: libcurl {requestx.__libcurl__['version']}, {requestx.__libcurl__['ssl']}")
    print(f"smoke: platform layer {requestx.__engine__['platform']}")
    with tempfile.TemporaryDirectory() as directory:
        tls = TLSFiles(Path(directory))
        with (
            HypercornServer() as plain,
            HypercornServer(certfile=tls.cert_file, keyfile=tls.cert_file) as secure,
        ):
            with requestx.Client() as client:
                answer = client.get(plain.url + "/json")
                assert answer.status_code == 200 and answer.json() == {"Hello": "world!"}
                print("smoke: GET ok")
                sent = {"items": [1, 2, 3], "name": "café"}
                answer = client.post(plain.url + "/echo", json=sent)
                answer.raise_for_status()
                echoed = answer.json()
                assert echoed["method"] == "POST", echoed
                body = echoed["body"].encode("latin-1")  # the bytes as sent (see the app's _echo)
                assert requestx.Response(200, content=body).json() == sent
                print("smoke: POST JSON ok")
                size = 3 * 1024 * 1024 + 17
                digest = hashlib.sha256()
                with client.stream("GET", f"{plain.url}/bytes/{size}?chunked=1") as response:
                    for chunk in response.iter_bytes():
                        digest.update(chunk)
                assert digest.hexdigest() == hashlib.sha256(pattern_bytes(size)).hexdigest()
                print(f"smoke: streamed download of {size} bytes ok")
            with requestx.Client(http2=True, verify=tls.ca_file) as client:
                answer = client.get(secure.url + "/json")
                assert answer.http_version == "HTTP/2", answer.http_version
                assert answer.json() == {"Hello": "world!"}
                print("smoke: HTTP/2 over TLS ok")

            async def many() -> list[int]:
                async with requestx.AsyncClient(http2=True, verify=tls.ca_file) as client:
                    answers = await asyncio.gather(
                        *(client.get(secure.url + "/json") for _ in range(50))
                    )
                return [a.status_code for a in answers]

            assert asyncio.run(many()) == [200] * 50
            print("smoke: 50 async requests over one HTTP/2 connection ok")
    print("smoke: ok")


if __name__ == "__main__":
    main()
