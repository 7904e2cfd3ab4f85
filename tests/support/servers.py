"""Real servers for the tests, each a process of its own on a free loopback port: the Oxigraph
server (the ``oxigraph`` binary of the ``oxigraph`` package) and moto's S3 (``moto_server``); and
small misbehaving HTTP servers in a thread (:func:`handler_server`).

Each runs in a process group of its own, so stopping it stops whatever it started too; leaving
the ``with`` block stops it, however the block ends.
"""

from __future__ import annotations

import contextlib
import http.server
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator, Optional

# Loopback only: a proxy from the environment must not see these requests.
_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))

# What the tests of an S3 library put in the environment: moto takes any credentials, and no
# request may look for real ones (a profile, the instance metadata service).
S3_TEST_ENVIRONMENT = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_SESSION_TOKEN": "testing",
    "AWS_DEFAULT_REGION": "us-east-1",
    "AWS_REGION": "us-east-1",
    "AWS_EC2_METADATA_DISABLED": "true",
    "AWS_CONFIG_FILE": os.devnull,
    "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
    "NO_PROXY": "127.0.0.1,localhost",
    "no_proxy": "127.0.0.1,localhost",
}


def free_port() -> int:
    """A loopback port nobody listens on now (another process may take it before it is used)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def executable(name: str) -> str:
    """A script or binary of the test environment: next to this Python first (the venv's bin/)."""
    beside = Path(sys.executable).parent / name  # not resolved: the venv's python is a symlink
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    found = shutil.which(name)
    if found is None:
        raise RuntimeError(f"{name} is not installed next to {sys.executable} nor on PATH")
    return found


@dataclass
class ServerProcess:
    """A server started by :func:`_serve`: its base URL and process."""

    name: str
    url: str
    process: subprocess.Popen
    log: Path

    @property
    def endpoint_url(self) -> str:
        return self.url

    @property
    def port(self) -> int:
        return int(self.url.rsplit(":", 1)[1])

    def running(self) -> bool:
        return self.process.poll() is None

    def kill(self) -> None:
        """SIGKILL the whole process group, as a crash would end it."""
        self._signal(signal.SIGKILL)
        self.process.wait(10)

    def stop(self, timeout: float = 10.0) -> None:
        """SIGTERM the process group, SIGKILL after ``timeout`` seconds; return once it is gone."""
        self._signal(signal.SIGTERM)
        try:
            self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()
        self._signal(signal.SIGKILL)  # children that outlived their parent

    def log_text(self) -> str:
        try:
            return self.log.read_text(errors="replace")
        except OSError:
            return ""

    def _signal(self, number: int) -> None:
        # start_new_session made the server the leader of a group with its own id.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, number)


def _answers(url: str) -> bool:
    try:
        _OPENER.open(url, timeout=2).read()
        return True
    except urllib.error.HTTPError:
        return True  # an HTTP answer, even an error, means it listens
    except OSError:
        return False


@contextlib.contextmanager
def _serve(name: str, command: Callable[[int], list[str]], ready_path: str, timeout: float = 30.0,
           attempts: int = 3, env: Optional[dict] = None) -> Iterator[ServerProcess]:
    """Start ``command(port)`` on a free port and wait until ``ready_path`` answers; stop it after.

    A port taken between choosing and binding it fails the start: it is tried again on another.
    """
    server = None
    for attempt in range(attempts):
        port = free_port()
        handle, log = tempfile.mkstemp(prefix=f"{name}-", suffix=".log")
        with os.fdopen(handle, "wb") as output:
            process = subprocess.Popen(command(port), stdout=output, stderr=subprocess.STDOUT,
                                       stdin=subprocess.DEVNULL, start_new_session=True,
                                       env={**os.environ, **(env or {})})
        candidate = ServerProcess(name, f"http://127.0.0.1:{port}", process, Path(log))
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and candidate.running():
            if _answers(candidate.url + ready_path):
                server = candidate
                break
            time.sleep(0.05)
        if server is not None:
            break
        died = not candidate.running()  # a port taken meanwhile ends it at once: try another
        candidate.stop()
        text = candidate.log_text()
        Path(log).unlink(missing_ok=True)
        if attempt == attempts - 1 or not died:
            raise RuntimeError(f"{name} did not come up on {candidate.url} within {timeout:g} s: {text[-2000:]}")
    try:
        yield server
    finally:
        server.stop()
        server.log.unlink(missing_ok=True)


def oxigraph_server(location: str | os.PathLike, timeout: float = 30.0):
    """``oxigraph serve`` over the folder ``location`` on a free loopback port.

    A context manager yielding a :class:`ServerProcess` (``.url``, ``.process``, ``.stop()``,
    ``.kill()``); the folder may be opened again by a later server once this one is gone.
    """
    binary = executable("oxigraph")
    Path(location).mkdir(parents=True, exist_ok=True)
    return _serve("oxigraph", lambda port: [binary, "serve", "--location", str(location), "--bind",
                                            f"127.0.0.1:{port}"], "/query?query=ASK%7B%7D", timeout)


def moto_s3_server(timeout: float = 30.0, check_credentials: bool = False):
    """moto's server (S3 among the rest) on a free loopback port, its state in memory.

    A context manager yielding a :class:`ServerProcess` whose ``.endpoint_url`` is the S3 endpoint.
    It takes any credentials, unless ``check_credentials``: then it knows none and refuses every request.
    """
    script = executable("moto_server")
    env = {"AWS_EC2_METADATA_DISABLED": "true"}
    if check_credentials:
        env["INITIAL_NO_AUTH_ACTION_COUNT"] = "0"  # moto's IAM checks from the first request on
    return _serve("moto", lambda port: [script, "-H", "127.0.0.1", "-p", str(port)], "/moto-api/", timeout,
                  env=env)


def s3_client(endpoint_url: str):
    """A boto3 S3 client of the moto server, with moto's test credentials."""
    import boto3

    return boto3.client("s3", endpoint_url=endpoint_url, region_name="us-east-1", aws_access_key_id="testing",
                        aws_secret_access_key="testing")


def create_bucket(endpoint_url: str, name: str) -> str:
    """Create the bucket ``name`` on the server; return its name."""
    s3_client(endpoint_url).create_bucket(Bucket=name)
    return name


def s3_options(endpoint_url: str) -> dict:
    """fsspec storage options of an S3 library on the moto server (failing fast, as tests want)."""
    return {"endpoint_url": endpoint_url, "key": "testing", "secret": "testing",
            "client_kwargs": {"region_name": "us-east-1"},
            "config_kwargs": {"connect_timeout": 2, "read_timeout": 10, "retries": {"max_attempts": 2}}}


@contextlib.contextmanager
def handler_server(handler: type[http.server.BaseHTTPRequestHandler]) -> Iterator[str]:
    """``handler`` served by a thread on a free loopback port, without its request log; yields the URL."""
    quiet = type(handler.__name__, (handler,), {"log_message": lambda self, *args: None})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), quiet)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
