"""requestx: an async-first, httpx-compatible HTTP client on a libcurl C engine."""
