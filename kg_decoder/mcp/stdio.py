"""The server's stdio transport: the SDK's ``stdio_server`` over the process's pipes, read and written
by the event loop itself.

The SDK reads its standard input and writes its standard output through ``anyio.wrap_file``: a line
read, a message written and its flush are three trips to a worker thread and back for every call, a
third of a millisecond of a trace's answer on two busy cores (``bench/mcp_cost.py``). Where both are
pipes or sockets (as every MCP client starts a server), the loop waits on them itself and reads and
writes them without blocking. Anything else (a file, a terminal) is left to the SDK's own transport.

As the SDK does while it serves, the protocol gets private duplicates of descriptors 0 and 1, and
those two are pointed at the null device and at stderr: a worker's, a library's or a ``print``'s
stray output cannot break the stream. Both are put back when the server stops.
"""

from __future__ import annotations

import fcntl
import os
import stat
import sys
from contextlib import contextmanager
from typing import Iterator

import anyio

READ_BYTES = 1 << 16


def pollable(fd: int) -> bool:
    """Whether the event loop can wait on ``fd``: a pipe or a socket (not a file, not a terminal).

    >>> reading, writing = os.pipe()
    >>> pollable(reading), pollable(writing)
    (True, True)
    >>> os.close(reading); os.close(writing)
    """
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


@contextmanager
def claimed_stdio() -> Iterator[tuple[int, int]]:
    """(the protocol's input, its output): private, non-blocking duplicates of descriptors 0 and 1,
    which point at the null device and at stderr meanwhile; put back on leaving."""
    sys.stdout.flush()
    wire_in = fcntl.fcntl(0, fcntl.F_DUPFD_CLOEXEC, 3)
    wire_out = fcntl.fcntl(1, fcntl.F_DUPFD_CLOEXEC, 3)
    null = os.open(os.devnull, os.O_RDONLY)
    try:
        os.dup2(null, 0)
        os.dup2(2, 1)
    finally:
        os.close(null)
    os.set_blocking(wire_in, False)
    os.set_blocking(wire_out, False)
    try:
        yield wire_in, wire_out
    finally:
        try:
            sys.stdout.flush()
        except (OSError, ValueError):
            pass
        for private, standard in ((wire_in, 0), (wire_out, 1)):
            os.set_blocking(private, True)
            os.dup2(private, standard)
            os.close(private)


class PipeLines:
    """The lines of a non-blocking descriptor, as text, read when the event loop says it is readable
    (the file the SDK's ``stdio_server`` reads: ``async for line in ...``)."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self._buffer = bytearray()
        self._ended = False

    def __aiter__(self) -> "PipeLines":
        return self

    async def __anext__(self) -> str:
        scanned = 0
        while True:
            end = self._buffer.find(b"\n", scanned)
            if end >= 0:
                line = bytes(self._buffer[:end + 1])
                del self._buffer[:end + 1]
                return line.decode("utf-8", errors="replace")
            if self._ended:
                if not self._buffer:
                    raise StopAsyncIteration
                line = bytes(self._buffer)
                self._buffer.clear()
                return line.decode("utf-8", errors="replace")
            scanned = len(self._buffer)
            await anyio.wait_readable(self.fd)
            try:
                chunk = os.read(self.fd, READ_BYTES)
            except BlockingIOError:
                continue
            if chunk:
                self._buffer += chunk
            else:
                self._ended = True


class PipeWriter:
    """Text written to a non-blocking descriptor: kept by ``write``, sent by ``flush``, waiting for
    the pipe to drain while it is full (the file the SDK's ``stdio_server`` writes)."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self._pending = bytearray()

    async def write(self, text: str) -> int:
        self._pending += text.encode("utf-8")
        return len(text)

    async def flush(self) -> None:
        data, self._pending = memoryview(bytes(self._pending)), bytearray()
        while data:
            try:
                data = data[os.write(self.fd, data):]
            except BlockingIOError:
                await anyio.wait_writable(self.fd)


def serve(server) -> None:
    """Serve ``server`` (an ``MCPServer``) over stdio until the client closes its input: with the
    event loop's own reads and writes where both ends are pipes or sockets, else with the SDK's."""
    if not (pollable(0) and pollable(1)):
        server.run("stdio")
        return
    from ..patches.mcp import serve_stdio_files

    async def run() -> None:
        with claimed_stdio() as (wire_in, wire_out):
            await serve_stdio_files(server, PipeLines(wire_in), PipeWriter(wire_out))

    anyio.run(run)
