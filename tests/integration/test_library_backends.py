"""The library's contract on each backend: a local folder (:class:`Library`), an fsspec ``file://``
URL and S3 (moto's server on a loopback port) through :class:`FsLibrary`; then :func:`open_library`
and the errors of storage that cannot be reached.
"""

from __future__ import annotations

import os
import pickle
import time
import uuid

import pytest
from servers import S3_TEST_ENVIRONMENT, create_bucket, free_port, moto_s3_server, s3_options

from kg_decoder.graph.library import FsLibrary, Library, open_library, sha256_hex
from kg_decoder.model.errors import StoreError

BUCKET = "kg-library-tests"
BACKENDS = ["folder", "file-url", "s3"]


@pytest.fixture(scope="module")
def s3():
    """moto's S3 on a free loopback port for the module, with a bucket: its endpoint URL."""
    with pytest.MonkeyPatch.context() as environment:
        for name, value in S3_TEST_ENVIRONMENT.items():
            environment.setenv(name, value)
        with moto_s3_server() as server:
            create_bucket(server.endpoint_url, BUCKET)
            yield server.endpoint_url


@pytest.fixture(params=BACKENDS)
def kind(request) -> str:
    return request.param


@pytest.fixture
def location(kind, tmp_path, request) -> tuple[str, dict]:
    """A fresh library's URL (or folder) and storage options, on the backend ``kind``."""
    if kind == "folder":
        return str(tmp_path / "library"), {}
    if kind == "file-url":
        return f"file://{tmp_path}/library", {}
    return f"s3://{BUCKET}/{uuid.uuid4().hex}", s3_options(request.getfixturevalue("s3"))


@pytest.fixture
def library(kind, location):
    url, options = location
    return Library(url) if kind == "folder" else FsLibrary(url, options)


def write_raw(library, relative: str, data: bytes) -> None:
    """Bytes under the library's root, past its interface (a stray file, a writer's temporary)."""
    if isinstance(library, Library):
        target = library.root / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    else:
        path = f"{library.root}/{relative}"
        library.fs.makedirs(path.rsplit("/", 1)[0], exist_ok=True)  # a folder's; nothing on S3
        library.fs.pipe_file(path, data)


def blobs(count: int) -> dict[str, bytes]:
    datas = [f"blob {n} {uuid.uuid4()}".encode() for n in range(count)]
    return {sha256_hex(data): data for data in datas}


def test_put_then_get_gives_the_bytes_back(library):
    key = library.put(b"hello")
    assert key == sha256_hex(b"hello")
    assert library.get(key) == b"hello" and key in library
    empty = library.put(b"")
    assert library.get(empty) == b""
    given = sha256_hex(b"named")
    assert library.put(b"named", given) == given and library.get(given) == b"named"
    large = os.urandom(3 * 2**20)
    assert library.get(library.put(large)) == large


def test_the_same_bytes_again_add_nothing(library):
    key = library.put(b"twice")
    assert library.put(b"twice") == key
    assert list(library.keys()) == [key]
    assert library.put_new({key: b"twice"}) == []
    assert list(library.keys()) == [key] and library.get(key) == b"twice"


def test_put_new_returns_only_the_keys_that_were_not_there(library):
    new = blobs(5)
    first, *rest = new
    library.put(new[first], first)
    assert library.put_new(new) == rest
    assert all(library.get(key) == data for key, data in new.items())
    assert library.put_new({}) == []


def test_keys_lists_exactly_the_blobs(library):
    new = blobs(40)  # several two-hex folders, some shared
    assert list(library.keys()) == []
    library.put_new(new)
    some = next(iter(new))
    write_raw(library, f"sha256/{some[:2]}/.incoming-x1y2", b"a writer's temporary")
    write_raw(library, f"sha256/{some[:2]}/notes.txt", b"a stray file")
    write_raw(library, f"sha256/00/{some}", b"a blob in the wrong folder")
    assert list(library.keys()) == sorted(new)


def test_remove_forgets_the_blobs_and_ignores_missing_ones(library):
    new = blobs(3)
    library.put_new(new)
    gone, kept, _ = new
    library.remove([gone, sha256_hex(b"never stored")])
    library.remove([])
    assert gone not in library and kept in library
    with pytest.raises(KeyError):
        library.get(gone)
    assert list(library.keys()) == sorted(set(new) - {gone})


def test_a_missing_or_malformed_key_is_a_key_error(library):
    missing = sha256_hex(b"nothing")
    assert missing not in library
    for call in (library.get, library.modified, library.age):
        with pytest.raises(KeyError, match="no bytes"):
            call(missing)
    with pytest.raises(KeyError, match="not a sha256"):
        library.get("../../etc/passwd")
    with pytest.raises(KeyError):
        library.put(b"x", "ABC")


def test_ages_tell_the_collector_how_recent_each_blob_is(library):
    before = time.time()
    new = blobs(3)
    library.put_new(new)
    after = time.time()
    for key in new:
        # S3 keeps whole seconds: the stamp may fall up to one second before the write began.
        assert before - 2 <= library.modified(key) <= after + 2
        assert 0 <= library.age(key) < 60
    ages = library.ages()
    assert sorted(ages) == sorted(new) and all(0 <= age < 60 for age in ages.values())


@pytest.mark.parametrize("kind", ["folder", "file-url"])  # S3 sets no write time but the present one
def test_an_old_blob_is_old_until_written_again(library, kind):
    key = library.put(b"from long ago")
    path = library.path_of(key)
    hour_ago = time.time() - 3600
    os.utime(path, (hour_ago, hour_ago))
    assert library.age(key) >= 3599 and library.ages()[key] >= 3599
    if kind == "file-url":  # a shared library renews a blob a decode is about to cite
        assert library.put_new({key: b"from long ago"}) == []
        assert library.age(key) < 60


def test_a_shared_library_renews_the_age_of_bytes_written_again(s3):
    library = FsLibrary(f"s3://{BUCKET}/{uuid.uuid4().hex}", s3_options(s3))
    key = library.put(b"cited again")
    first = library.modified(key)
    time.sleep(1.1)  # S3's write times are whole seconds
    assert library.put_new({key: b"cited again"}) == []
    assert library.modified(key) > first


@pytest.mark.parametrize("kind", ["file-url", "s3"])
def test_a_second_client_sees_what_the_first_wrote(kind, location):
    url, options = location
    reader = FsLibrary(url, options)
    writer = FsLibrary(url, {**options, "skip_instance_cache": True})  # another machine, as it were
    assert list(reader.keys()) == []  # s3fs caches this listing...
    key = writer.put(b"written elsewhere")
    assert key in reader and list(reader.keys()) == [key]  # ...which must not hide the new blob
    assert reader.get(key) == b"written elsewhere"
    writer.remove([key])
    assert key not in reader and list(reader.keys()) == []


@pytest.mark.parametrize("kind", ["file-url", "s3"])
def test_a_shared_library_travels_to_another_process(kind, location):
    url, options = location
    library = FsLibrary(url, options)
    key = library.put(b"for a worker")
    copy = pickle.loads(pickle.dumps(library))
    assert copy.get(key) == b"for a worker" and list(copy.keys()) == [key]


def test_open_library_picks_the_class_by_location(tmp_path, s3):
    folder = open_library(str(tmp_path / "a"))
    assert type(folder) is Library and folder.root == tmp_path / "a"
    assert type(open_library(tmp_path / "b")) is Library
    as_url = open_library(f"file://{tmp_path}/c")
    assert type(as_url) is Library and as_url.root == tmp_path / "c"
    assert type(open_library(f"file://{tmp_path}/d", {})) is Library
    prefix = uuid.uuid4().hex
    shared = open_library(f"s3://{BUCKET}/{prefix}", s3_options(s3))
    assert type(shared) is FsLibrary
    key = shared.put(b"through open_library")
    assert FsLibrary(f"s3://{BUCKET}/{prefix}/", s3_options(s3)).get(key) == b"through open_library"
    assert type(open_library("memory://open-library-test")) is FsLibrary
    with pytest.raises(StoreError, match="endpoint_url"):
        open_library(tmp_path / "e", {"endpoint_url": s3})


def assert_one_line(error: StoreError, *needles: str) -> None:
    message = str(error)
    assert "\n" not in message and "Traceback" not in message, message
    assert error.__suppress_context__ and error.__cause__ is None  # no botocore traceback behind it
    for needle in needles:
        assert needle in message, message


def test_an_unreachable_endpoint_is_a_store_error_at_once(s3):
    url = f"s3://{BUCKET}/nowhere"
    options = {**s3_options(f"http://127.0.0.1:{free_port()}"),
               "config_kwargs": {"connect_timeout": 1, "read_timeout": 1, "retries": {"max_attempts": 1}}}
    started = time.monotonic()
    with pytest.raises(StoreError) as raised:
        open_library(url, options)
    assert_one_line(raised.value, url, "Could not connect")
    assert time.monotonic() - started < 10


def test_refused_credentials_are_a_store_error(s3):
    with moto_s3_server(check_credentials=True) as strict:
        with pytest.raises(StoreError) as raised:
            open_library(f"s3://{BUCKET}/prefix", s3_options(strict.endpoint_url))
    assert_one_line(raised.value, "access denied")


def test_a_missing_bucket_is_a_store_error(s3):
    with pytest.raises(StoreError) as raised:
        open_library("s3://no-such-bucket-here/prefix", s3_options(s3))
    assert_one_line(raised.value, "no bucket no-such-bucket-here")


def test_an_unknown_protocol_is_a_store_error():
    with pytest.raises(StoreError) as raised:
        open_library("nosuchproto://bucket/prefix")
    assert_one_line(raised.value, "nosuchproto")
