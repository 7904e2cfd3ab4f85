"""The MCP server for agents (``kg-decoder mcp``): the store's search, trace, page pictures, documents,
SPARQL and audits as tools an agent calls, over the same public API and bounded calls as the web app
(``kg_decoder.serve``); decode and add_facts when started with ``--allow-writes``. Needs the ``mcp``
extra (``pip install 'kg-decoder[mcp]'``): only this package imports the SDK.

Over stdio by default, or streamable HTTP on a loopback port. The store is opened as ``kg-decoder
serve`` opens it: for writing, held while the server runs (``--allow-writes``); else as a reader
opens it, for writing where no other process holds it (reads see every commit, the text index is kept
caught up), read-only as it is at that moment while another process (a running ``serve``) holds it.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional, Sequence

from ..graph.opening import open_for_reading, open_store
from ..graph.sparql_guard import allowed_endpoints
from ..graph.store import KgStore
from ..model import ChunkOptions, DecodeOptions
from ..model.errors import RequestError
from ..serve import Bounds
from .tools import McpSettings

LOOPBACK = "127.0.0.1"


def open_mcp_store(location, library: Optional[str] = None, library_options: Optional[dict] = None,
                   allow_writes: bool = False) -> KgStore:
    """The store as the server holds it (see the module's description)."""
    if allow_writes:
        store = open_store(location, library=library, library_options=library_options, create=True)
    else:
        def say_locked() -> None:
            print(f"kg-decoder mcp: {location} is in use by another process: reading it read-only, as it is now",
                  file=sys.stderr)

        store = open_for_reading(location, library, library_options, on_locked=say_locked)
    store.text_index.opened()  # made, or caught up with the graph, before a worker reads it
    if not store.read_only:
        store.serve_reads_first()
    return store


def run_server(store: KgStore, roots: Sequence[str] = (), allow_writes: bool = False, http_port: Optional[int] = None,
               query_timeout: float = 30.0, row_cap: int = 1000, allow_service: Sequence[str] = (),
               request_workers: int = 2, worker_memory_mb: int = 1024,
               decode_options: Optional[DecodeOptions] = None, chunk_options: Optional[ChunkOptions] = None) -> None:
    """Serve ``store`` over stdio, or streamable HTTP on ``127.0.0.1:http_port`` (at ``/mcp``), until the
    client closes the connection (stdio) or the process is stopped."""
    from . import stdio
    from .server import build_server

    folders = []
    for root in roots:
        folder = Path(root).expanduser().resolve()
        if not folder.is_dir():
            raise RequestError(f"--root {root} is not a folder", code="bad-root")
        folders.append(folder)
    if row_cap < 1 or query_timeout <= 0 or request_workers < 0:
        raise RequestError("--row-cap and --query-timeout take positive numbers, --request-workers one from 0")
    settings = McpSettings(store=store, roots=tuple(folders), allow_writes=allow_writes,
                           bounds=Bounds(seconds=query_timeout), row_cap=row_cap,
                           allow_service=allowed_endpoints(allow_service),
                           decode_options=decode_options or DecodeOptions(),
                           chunk_options=chunk_options or ChunkOptions())
    server = build_server(settings, request_workers=request_workers, worker_memory_mb=worker_memory_mb)
    mode = "writable" if allow_writes and not store.read_only else "read-only"
    if http_port is None:
        print(f"kg-decoder mcp: serving {store.location} over stdio ({mode})", file=sys.stderr)
        stdio.serve(server)
    else:
        print(f"kg-decoder mcp: serving {store.location} on http://{LOOPBACK}:{http_port}/mcp ({mode})",
              file=sys.stderr)
        server.run("streamable-http", host=LOOPBACK, port=http_port)


__all__ = ["McpSettings", "open_mcp_store", "run_server"]
