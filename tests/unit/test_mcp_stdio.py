"""The MCP server's own stdio transport (``kg_decoder.mcp.stdio``): while it serves, only the protocol
reaches the process's standard output (a ``print``, a child's output go to stderr); lines are read
whole however the pipe splits them; a large message is written whole through a full pipe; the
standard descriptors are put back afterwards."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import anyio

from conftest import REPO
from kg_decoder.mcp.stdio import PipeLines, PipeWriter, pollable


def test_stray_output_goes_to_stderr_while_the_protocol_has_stdout():
    code = textwrap.dedent("""
        import os, subprocess, sys
        from kg_decoder.mcp.stdio import claimed_stdio
        with claimed_stdio() as (wire_in, wire_out):
            print("stray print", flush=True)
            os.write(1, b"stray write\\n")
            subprocess.run([sys.executable, "-c", "print('stray child')"], check=True)
            assert os.read(0, 10) == b""  # fd 0 is the null device
            os.set_blocking(wire_in, True)
            line = os.read(wire_in, 100)
            os.write(wire_out, b"wire: " + line)
        print("after", flush=True)  # stdout is the pipe again
    """)
    done = subprocess.run([sys.executable, "-c", code], input=b"hello\n", capture_output=True, cwd=REPO,
                          env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=60)
    assert done.returncode == 0, done.stderr.decode()
    assert done.stdout == b"wire: hello\nafter\n"
    assert [line for line in done.stderr.decode().splitlines() if line.startswith("stray")] == \
           ["stray print", "stray write", "stray child"]


def test_lines_are_read_whole_and_a_large_message_is_written_whole():
    reading, writing = os.pipe()
    back_reading, back_writing = os.pipe()
    os.set_blocking(reading, False)
    os.set_blocking(back_writing, False)
    large = "é" * 300_000  # 600 kB: more than a pipe holds, written as the other end drains

    async def main() -> tuple[list[str], bytes]:
        lines: list[str] = []
        received = bytearray()

        async def feed() -> None:
            for part in (b'{"a": 1}\n{"b"', b': "\xc3', b'\xa9"}\n', b"last"):  # a character split too
                os.write(writing, part)
                await anyio.sleep(0.01)
            os.close(writing)

        async def drain() -> None:
            os.set_blocking(back_reading, False)
            while True:
                await anyio.wait_readable(back_reading)
                chunk = os.read(back_reading, 1 << 16)
                if not chunk:
                    return
                received.extend(chunk)

        async with anyio.create_task_group() as group:
            group.start_soon(feed)
            group.start_soon(drain)
            async for line in PipeLines(reading):
                lines.append(line)
            writer = PipeWriter(back_writing)
            await writer.write(large)
            await writer.write("\n")
            await writer.flush()
            os.close(back_writing)
        return lines, bytes(received)

    lines, received = anyio.run(main)
    os.close(reading)
    os.close(back_reading)
    assert lines == ['{"a": 1}\n', '{"b": "é"}\n', "last"]
    assert received.decode("utf-8") == large + "\n"


def test_a_file_is_left_to_the_sdks_transport(tmp_path):
    path = tmp_path / "input.jsonl"
    path.write_text("{}\n")
    with open(path) as file:
        assert not pollable(file.fileno())
