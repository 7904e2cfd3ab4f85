"""The MCP SDK's ``MCPServer`` served over stdio files of kg-decoder's own.

Pinned: ``mcp>=2.3,<3`` (the ``mcp`` extra in pyproject.toml); written against mcp 2.3.0. ``UPSTREAM``
records what the mirror was written against, and ``tests/unit/test_patches.py`` says when a new
release changes it.

``MCPServer.run("stdio")`` runs ``MCPServer.run_stdio_async``: ``stdio_server()`` over the process's
standard input and output, read and written through worker threads, and the server's low-level
server over the streams it gives. MCPServer has no public way to serve other files: this mirrors
``run_stdio_async`` with the files handed to ``stdio_server`` (its documented arguments), reading
the server's private ``_lowlevel_server`` as that method does. :mod:`kg_decoder.mcp.stdio` hands it
files the event loop reads and writes itself (why: there).
"""

from __future__ import annotations

from typing import Any

from . import Upstream


async def serve_stdio_files(server: Any, stdin: Any, stdout: Any) -> None:
    """``server`` (an ``MCPServer``) run as ``run_stdio_async`` runs it, over ``stdio_server(stdin,
    stdout)``, until the input ends."""
    from mcp.server.stdio import stdio_server

    lowlevel = server._lowlevel_server
    async with stdio_server(stdin, stdout) as (read_stream, write_stream):
        await lowlevel.run(read_stream, write_stream, lowlevel.create_initialization_options())


UPSTREAM = (
    Upstream("serve_stdio_files", "mcp.server.mcpserver.server:MCPServer.run_stdio_async",
             "(self) -> 'None'",
             "bf4f995905dacd91b2cd2fbcb3578d8195faa1d86b2c8790e8b4f2a36cf83fb9"),
    Upstream("serve_stdio_files", "mcp.server.stdio:stdio_server",
             "(stdin: Optional[anyio.AsyncFile[str]] = None, stdout: Optional[anyio.AsyncFile[str]] = None)",
             "9b12b189ab100f8274eca577176714aee6a2f73f661dcae5981c3443e6e1434c"),
)

__all__ = ["UPSTREAM", "serve_stdio_files"]
