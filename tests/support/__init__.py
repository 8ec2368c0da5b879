"""Helpers the tests share; fixtures live in tests/conftest.py, test servers in tests/servers/.

    paths            ROOT, the checkout's root (scripts/, csrc/, benchmarks/, tests/c/)
    bundled_libcurl  the libcurl the extension links, for tests that compile C against it
    sanitized        whether the suite runs against the ASan + UBSan extension
    child_process    run a snippet in a child interpreter that imports this checkout's requestx
    bombs            decompression bombs, one per content coding
    bomb_client      the client side of the bomb tests, run as `python -m tests.support.bomb_client`
    tls              TLSFiles: a trustme CA and a server certificate, as files
    public_names     what requestx's public names add to httpx's
    threads          run a function in threads; count the engines' loop threads
    transfers        wait for the engine's live transfers to come back down
    network          closed_port(): a loopback port nothing listens on
    echo             read what the suite's server received (/echo) and check a client still works

No module here imports a test module, and no test module imports another: a helper two test
files need lives here once.
"""
