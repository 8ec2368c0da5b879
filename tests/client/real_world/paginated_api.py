"""Walk a paginated JSON API with Basic auth and a session cookie, following Link headers.

python paginated_api.py BASE_URL
"""

import json
import sys

import httpx

base_url = sys.argv[1]
names = []
pages = 0
with httpx.Client(base_url=base_url, auth=("reader", "letmein"), timeout=10.0) as client:
    denied = httpx.get(f"{base_url}/api/items").status_code  # no credentials
    url = "/api/items"
    while url and pages < 50:  # 5 pages expected: bounded even if the links loop
        response = client.get(url)
        response.raise_for_status()
        pages += 1
        names.extend(item["name"] for item in response.json()["items"])
        next_link = response.links.get("next")
        url = next_link["url"] if next_link else None
    session = client.cookies.get("session")
    # A new top-level call has no cookie jar: the API refuses page 2 without the session.
    without_session = httpx.get(f"{base_url}/api/items?page=2", auth=("reader", "letmein"))
    try:
        without_session.raise_for_status()
        refused = "no error"
    except httpx.HTTPStatusError as exc:
        refused = f"{type(exc).__name__} {exc.response.status_code}"

print(
    json.dumps(
        {
            "denied": denied,
            "pages": pages,
            "names": names,
            "session": session,
            "refused": refused,
        }
    )
)
