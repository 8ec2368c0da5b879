"""Upload files with form fields as multipart/form-data, from memory and from disk.

python multipart_upload.py BASE_URL
"""

import io
import json
import os
import sys
import tempfile

import httpx

base_url = sys.argv[1]
results = {}
with tempfile.TemporaryDirectory() as folder:
    report = os.path.join(folder, "report.csv")
    with open(report, "wb") as handle:
        handle.write(b"id,value\n" + b"".join(b"%d,%d\n" % (n, n * n) for n in range(50000)))
    boundary = {"Content-Type": "multipart/form-data; boundary=fixed-boundary-for-comparison"}
    with httpx.Client(base_url=base_url, headers=boundary) as client, open(report, "rb") as f:
        files = {
            "report": ("report.csv", f, "text/csv"),
            "notes": ("notes.txt", io.BytesIO("h\u00e9llo".encode()), "text/plain"),
        }
        data = {"title": "Quarterly numbers", "tags": ["a", "b"]}
        response = client.post("/upload-digest", files=files, data=data)
        response.raise_for_status()
        results["digest"] = response.json()
        del results["digest"]["pieces"]  # how the body was split on the wire: client-specific
        echo = client.post("/echo", files={"tiny": ("tiny.bin", b"\x00\x01\x02")})
        results["echo_body"] = echo.json()["body"]

print(json.dumps(results, sort_keys=True))
