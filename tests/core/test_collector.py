"""collector_paused pauses Python's cyclic collector for a block and restores it as it was."""

from __future__ import annotations

import gc

import pytest

from perfcast.core.collector import collector_paused


def test_paused_inside_and_enabled_again_after():
    assert gc.isenabled()
    with collector_paused():
        assert not gc.isenabled()
        with collector_paused():  # nested: the inner block leaves it paused
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()


def test_enabled_again_after_an_error():
    with pytest.raises(ValueError), collector_paused():
        raise ValueError("inside")
    assert gc.isenabled()


def test_left_disabled_when_it_was_disabled():
    gc.disable()
    try:
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        gc.enable()
