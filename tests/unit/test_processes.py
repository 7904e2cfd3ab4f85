"""decode/processes.py: helper processes, forked or spawned, one call each, killed and reaped."""

from __future__ import annotations

import os
import time

import psutil
import pytest

from kg_decoder.decode.processes import Helper, HelperFailed


def _children() -> set[int]:
    return {child.pid for child in psutil.Process().children()}


def test_a_spawned_helper_makes_its_named_call_and_is_reaped():
    before = _children()
    helper = Helper.spawn()
    helper.send("os.path:join", "a", "b")
    assert helper.result(timeout=60) == os.path.join("a", "b")
    assert helper.pid != os.getpid()
    helper.stop()
    helper.stop()  # again: nothing left to do
    assert _children() == before


def test_a_forked_helper_that_dies_or_raises_is_a_failure_not_an_answer():
    dead = Helper.fork(os._exit, 3)
    with pytest.raises(HelperFailed, match="died"):
        dead.result(timeout=60)
    dead.stop()
    raising = Helper.fork(int, "not a number")
    with pytest.raises(HelperFailed, match="ValueError"):
        raising.result(timeout=60)
    raising.stop()
    unknown = Helper.spawn()
    unknown.send("kg_decoder.no_such_module:call")
    with pytest.raises(HelperFailed, match="no call"):
        unknown.result(timeout=60)
    unknown.stop()


def test_a_helper_past_its_deadline_is_a_failure_and_stop_kills_it():
    before = _children()
    slow = Helper.fork(time.sleep, 60)
    started = time.monotonic()
    with pytest.raises(HelperFailed, match="no answer"):
        slow.result(timeout=0.2)
    assert slow.pid in _children()
    slow.stop()
    assert _children() == before and time.monotonic() - started < 30
