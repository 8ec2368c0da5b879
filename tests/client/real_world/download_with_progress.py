"""Download a large file with a progress read-out, the way httpx's docs show it.

python download_with_progress.py BASE_URL
"""

import hashlib
import json
import sys
import tempfile

import httpx

base_url = sys.argv[1]
digest = hashlib.sha256()
updates = 0
with tempfile.TemporaryFile() as download_file:
    with httpx.stream("GET", f"{base_url}/bytes/3000000") as response:
        total = int(response.headers["Content-Length"])
        last_percent = -1
        for chunk in response.iter_bytes():
            download_file.write(chunk)
            digest.update(chunk)
            percent = response.num_bytes_downloaded * 100 // total
            if percent != last_percent:
                updates += 1
                last_percent = percent
    size = download_file.tell()

print(
    json.dumps(
        {
            "status": response.status_code,
            "size": size,
            "total": total,
            "downloaded": response.num_bytes_downloaded,
            "sha256": digest.hexdigest(),
            "reached_100": last_percent == 100,
            "had_progress_updates": updates > 1,
        }
    )
)
