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
import pytest

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


def test_messages_are_read_parsed_and_written_whole_by_the_tasks_that_take_them():
    from mcp.shared.message import SessionMessage
    from mcp_types import JSONRPCRequest, JSONRPCResponse

    from kg_decoder.patches.mcp import MessagesRead, MessagesWritten

    class Lines:
        def __init__(self, lines):
            self.lines = iter(lines)

        def __aiter__(self):
            return self

        async def __anext__(self):
            for line in self.lines:
                return line
            raise StopAsyncIteration

    class Written:
        def __init__(self, broken=False):
            self.text, self.broken = "", broken

        async def write(self, text):
            self.text += text

        async def flush(self):
            if self.broken:
                raise BrokenPipeError

    async def main():
        read = MessagesRead(Lines(['{"jsonrpc": "2.0", "id": 1, "method": "ping"}\n', "not json\n"]))
        first, second = [item async for item in read]
        await read.aclose()
        with pytest.raises(anyio.ClosedResourceError):
            await read.receive()
        written, broken = Written(), MessagesWritten(Written(broken=True))
        async with MessagesWritten(written) as out:
            await out.send(SessionMessage(JSONRPCResponse(jsonrpc="2.0", id=1, result={"a": "é"})))
        with pytest.raises(anyio.ClosedResourceError):
            await out.send(SessionMessage(JSONRPCResponse(jsonrpc="2.0", id=2, result={})))
        with pytest.raises(anyio.BrokenResourceError):  # the client went away: the dispatcher drops the answer
            await broken.send(SessionMessage(JSONRPCResponse(jsonrpc="2.0", id=3, result={})))
        return first, second, written.text

    first, second, text = anyio.run(main)
    assert isinstance(first.message, JSONRPCRequest) and first.message.method == "ping"
    assert isinstance(second, Exception)  # a line that is no message: its error, as stdio_server gives it
    assert text == '{"jsonrpc":"2.0","id":1,"result":{"a":"é"}}\n'


def test_an_answer_is_written_whole_though_its_request_is_cancelled_and_a_stuck_reader_is_given_up(monkeypatch):
    from mcp.shared.message import SessionMessage
    from mcp_types import JSONRPCResponse

    from kg_decoder.patches import mcp as patched

    class Slow:  # a pipe the reader drains slowly: half a message goes, the flush waits, then the rest
        def __init__(self, seconds):
            self.text, self.pending, self.seconds = "", "", seconds

        async def write(self, text):
            self.pending += text

        async def flush(self):  # as PipeWriter: what is left to write is the flush's own
            half = len(self.pending) // 2
            self.text, rest, self.pending = self.text + self.pending[:half], self.pending[half:], ""
            await anyio.sleep(self.seconds)
            self.text += rest

    def answer(number):
        return SessionMessage(JSONRPCResponse(jsonrpc="2.0", id=number, result={"n": number}))

    async def main():
        slow = Slow(0.2)
        out = patched.MessagesWritten(slow)
        with anyio.move_on_after(0.05):  # the request is cancelled while its answer is being written
            await out.send(answer(1))
        await out.send(answer(2))
        monkeypatch.setattr(patched, "WRITE_SECONDS", 0.05)
        stuck = patched.MessagesWritten(Slow(10))
        with pytest.raises(anyio.BrokenResourceError):
            await stuck.send(answer(3))
        with pytest.raises(anyio.BrokenResourceError):  # given up: nothing goes after half a message
            await stuck.send(answer(4))
        return slow.text

    assert anyio.run(main) == '{"jsonrpc":"2.0","id":1,"result":{"n":1}}\n{"jsonrpc":"2.0","id":2,"result":{"n":2}}\n'
