"""Follow redirect chains and inspect the history, as crawlers and API clients do.

python redirect_chain.py BASE_URL
"""

import json
import sys

import httpx

base_url = sys.argv[1]
with httpx.Client(follow_redirects=True) as client:
    chain = client.get(f"{base_url}/redirect/chain/4")
    posted = client.post(f"{base_url}/redirect/303", content=b"form")
    kept = client.post(f"{base_url}/redirect/307", content=b"form")
    try:
        client.get(f"{base_url}/redirect/loop")
        loop = "no error"
    except httpx.TooManyRedirects as exc:
        loop = type(exc).__name__

with httpx.Client() as client:
    unfollowed = client.get(f"{base_url}/redirect/302")
    next_url = str(unfollowed.next_request.url) if unfollowed.next_request else None

print(
    json.dumps(
        {
            "chain_statuses": [r.status_code for r in chain.history] + [chain.status_code],
            "chain_final": str(chain.url).replace(base_url, ""),
            "posted": [posted.request.method, posted.json()["body"]],
            "kept": [kept.request.method, kept.json()["body"]],
            "loop": loop,
            "unfollowed": [unfollowed.status_code, (next_url or "").replace(base_url, "")],
        }
    )
)
