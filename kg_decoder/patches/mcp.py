"""The MCP SDK's ``MCPServer`` served over stdio files of kg-decoder's own.

Pinned: ``mcp>=2.3,<3`` (the ``mcp`` extra in pyproject.toml); written against mcp 2.3.0. ``UPSTREAM``
records what the mirror was written against, and ``tests/unit/test_patches.py`` says when a new
release changes it.

``MCPServer.run("stdio")`` runs ``MCPServer.run_stdio_async``: ``stdio_server()`` over the process's
standard input and output, and the server's low-level server over the streams it gives. MCPServer
has no public way to serve other files: this mirrors ``run_stdio_async``, reading the server's
private ``_lowlevel_server`` as that method does, over streams that mirror ``stdio_server``'s: each
line read parsed as a JSON-RPC message (a line that is none: its exception, as an item), each message
written as a line of JSON. ``stdio_server`` reads and writes in tasks of its own, each message handed
between them and the server's through a memory stream; here the server's task that receives a
message reads and parses it, and the task that answers writes the answer (one at a time), two
hand-overs between tasks a call fewer (why: ``docs/mcp.md``, Cost). :mod:`kg_decoder.mcp.stdio`
hands it files the event loop reads and writes itself.
"""

from __future__ import annotations

from typing import Any

import anyio

from . import Upstream


async def serve_stdio_files(server: Any, stdin: Any, stdout: Any) -> None:
    """``server`` (an ``MCPServer``) run as ``run_stdio_async`` runs it, its messages read from the
    lines of ``stdin`` (``async for``) and its answers written to ``stdout`` (``write``, ``flush``),
    until the input ends."""
    lowlevel = server._lowlevel_server
    await lowlevel.run(MessagesRead(stdin), MessagesWritten(stdout), lowlevel.create_initialization_options())


class MessagesRead:
    """The read stream ``stdio_server`` gives, over the lines of ``lines``: read when received."""

    def __init__(self, lines: Any) -> None:
        self._lines = lines
        self._closed = False

    async def receive(self) -> Any:
        import mcp_types
        from mcp.shared.message import SessionMessage

        if self._closed:
            raise anyio.ClosedResourceError
        try:
            line = await self._lines.__anext__()
        except StopAsyncIteration:
            raise anyio.EndOfStream from None
        try:
            message = mcp_types.jsonrpc_message_adapter.validate_json(line, by_name=False)
        except Exception as exc:  # as stdio_server: the server answers what it can of it
            return exc
        return SessionMessage(message)

    def __aiter__(self) -> "MessagesRead":
        return self

    async def __anext__(self) -> Any:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        self._closed = True

    async def __aenter__(self) -> "MessagesRead":
        return self

    async def __aexit__(self, *exc_info) -> None:
        await self.aclose()


WRITE_SECONDS = 30.0  # a message not taken whole by the reader by then: the connection is given up


class MessagesWritten:
    """The write stream ``stdio_server`` gives, over ``writer``: each message written by the task that
    sends it, whole (one at a time), as a line of JSON. A reader gone is ``BrokenResourceError``, which
    the server's dispatcher expects of a stream whose other end closed.

    A request cancelled while its answer is written (a client's cancellation, the server stopping) has
    it written to the end all the same, as ``stdio_server``'s own writing task would: half a message
    would spoil every message after it. A reader that takes none of it for :data:`WRITE_SECONDS` is
    taken for gone."""

    def __init__(self, writer: Any) -> None:
        self._writer = writer
        self._lock = anyio.Lock(fast_acquire=True)  # no turn of the loop when free (anyio >= 4.5; the SDK: 4.9)
        self._closed = self._broken = False

    async def send(self, session_message: Any) -> None:
        if self._closed:
            raise anyio.ClosedResourceError
        line = session_message.message.model_dump_json(by_alias=True, exclude_unset=True) + "\n"
        async with self._lock:
            if self._broken:
                raise anyio.BrokenResourceError
            with anyio.move_on_after(WRITE_SECONDS, shield=True) as writing:
                try:
                    await self._writer.write(line)
                    await self._writer.flush()
                except (BrokenPipeError, ConnectionError):
                    self._broken = True
            if writing.cancelled_caught:
                self._broken = True
            if self._broken:
                raise anyio.BrokenResourceError

    async def aclose(self) -> None:
        self._closed = True

    async def __aenter__(self) -> "MessagesWritten":
        return self

    async def __aexit__(self, *exc_info) -> None:
        await self.aclose()


UPSTREAM = (
    Upstream("serve_stdio_files", "mcp.server.mcpserver.server:MCPServer.run_stdio_async",
             "(self) -> 'None'",
             "bf4f995905dacd91b2cd2fbcb3578d8195faa1d86b2c8790e8b4f2a36cf83fb9"),
    Upstream("serve_stdio_files", "mcp.server.stdio:stdio_server",
             "(stdin: Optional[anyio.AsyncFile[str]] = None, stdout: Optional[anyio.AsyncFile[str]] = None)",
             "9b12b189ab100f8274eca577176714aee6a2f73f661dcae5981c3443e6e1434c"),
)

__all__ = ["UPSTREAM", "WRITE_SECONDS", "MessagesRead", "MessagesWritten", "serve_stdio_files"]
