"""A client used before fork() keeps working in the parent and in the child.

The loop thread does not survive fork(): the child's engine must notice, abandon the parent's
curl state without touching its connections, and start a loop of its own.
"""

from __future__ import annotations

import os

import requestx
from tests.servers import HypercornServer


def test_client_works_in_parent_and_child_after_fork(server: HypercornServer) -> None:
    with requestx.Client() as client:
        assert client.get(server.url + "/json").status_code == 200  # engine running pre-fork
        read_end, write_end = os.pipe()
        pid = os.fork()
        if pid == 0:  # child: report through the pipe, never return into pytest
            status = b"?"
            try:
                status = str(client.get(server.url + "/json").status_code).encode()
                client.close()
            finally:
                os.write(write_end, status)
                os._exit(0)
        os.close(write_end)
        child_status = os.read(read_end, 16)
        os.close(read_end)
        _, exit_status = os.waitpid(pid, 0)
        assert child_status == b"200"
        assert os.waitstatus_to_exitcode(exit_status) == 0
        # The parent's engine and pooled connection are untouched by the child.
        server.reset_stats()
        assert client.get(server.url + "/json").status_code == 200
        assert server.connection_count() == 1
