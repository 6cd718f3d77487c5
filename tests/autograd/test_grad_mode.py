"""Grad modes: no_grad, enable_grad, set_grad_enabled, inference_mode; per thread."""

from __future__ import annotations

import threading

import pytest

import gradlab
from gradlab.autograd import is_inference_mode_enabled


@pytest.fixture
def x():
    return gradlab.ones(2, requires_grad=True)


def test_no_grad_stops_recording(x):
    with gradlab.no_grad():
        assert not gradlab.is_grad_enabled()
        y = x * 2
    assert gradlab.is_grad_enabled()
    assert not y.requires_grad and y.grad_fn is None
    assert (x * 2).requires_grad


def test_enable_grad_inside_no_grad(x):
    with gradlab.no_grad():
        with gradlab.enable_grad():
            assert (x * 2).requires_grad
        assert not (x * 2).requires_grad


def test_modes_restore_on_error(x):
    with pytest.raises(ZeroDivisionError):
        with gradlab.no_grad():
            _ = 1 / 0
    assert gradlab.is_grad_enabled()


def test_set_grad_enabled_as_call_and_as_context(x):
    gradlab.set_grad_enabled(False)
    try:
        assert not gradlab.is_grad_enabled() and not (x * 2).requires_grad
    finally:
        gradlab.set_grad_enabled(True)
    assert gradlab.is_grad_enabled()
    with gradlab.set_grad_enabled(False):
        assert not gradlab.is_grad_enabled()
    assert gradlab.is_grad_enabled()
    with gradlab.no_grad():
        with gradlab.set_grad_enabled(True):
            assert (x * 2).requires_grad
        assert not gradlab.is_grad_enabled()


def test_decorators(x):
    @gradlab.no_grad()
    def called():
        return gradlab.is_grad_enabled()

    @gradlab.no_grad
    def bare():
        return gradlab.is_grad_enabled()

    @gradlab.enable_grad()
    def enabled():
        return gradlab.is_grad_enabled()

    @gradlab.set_grad_enabled(False)
    def disabled():
        return gradlab.is_grad_enabled()

    @gradlab.inference_mode()
    def inferring():
        return is_inference_mode_enabled(), gradlab.is_grad_enabled()

    @gradlab.inference_mode
    def inferring_bare():
        return is_inference_mode_enabled()

    assert gradlab.is_grad_enabled()  # decorating changed nothing (set_grad_enabled did once)
    assert called() is False and bare() is False and disabled() is False
    assert inferring() == (True, False) and inferring_bare() is True
    with gradlab.no_grad():
        assert enabled() is True
    assert gradlab.is_grad_enabled() and not is_inference_mode_enabled()
    assert bare.__name__ == "bare"  # functools.wraps


def test_decorated_function_may_recurse():
    @gradlab.no_grad()
    def depth(n):
        return 0 if n == 0 else 1 + depth(n - 1)

    assert depth(5) == 5 and gradlab.is_grad_enabled()


def test_one_instance_entered_twice():
    mode = gradlab.no_grad()
    with mode:
        with mode:
            assert not gradlab.is_grad_enabled()
        assert not gradlab.is_grad_enabled()
    assert gradlab.is_grad_enabled()


def test_inference_mode(x):
    with gradlab.inference_mode():
        assert is_inference_mode_enabled() and not gradlab.is_grad_enabled()
        y = x * 2
    assert not y.requires_grad
    assert not is_inference_mode_enabled() and gradlab.is_grad_enabled()
    with gradlab.no_grad(), gradlab.inference_mode(False):
        assert gradlab.is_grad_enabled() and not is_inference_mode_enabled()  # as in PyTorch


def test_backward_inside_no_grad_still_works(x):
    y = (x * 3).sum()
    with gradlab.no_grad():
        y.backward()
    assert x.grad.tolist() == [3.0, 3.0]


def test_weight_update_pattern(x):
    (x * 3).sum().backward()
    with gradlab.no_grad():
        x -= 0.5 * x.grad
    assert x.tolist() == [-0.5, -0.5] and x.is_leaf and x.requires_grad


def test_grad_mode_is_per_thread(x):
    """A no_grad block in another thread (a data loader) does not affect this one."""
    inside = threading.Event()
    release = threading.Event()
    other_saw = {}

    def loader():
        with gradlab.no_grad():
            other_saw["enabled"] = gradlab.is_grad_enabled()
            inside.set()
            release.wait(timeout=10)

    worker = threading.Thread(target=loader)
    worker.start()
    try:
        assert inside.wait(timeout=10)
        assert gradlab.is_grad_enabled()
        assert (x * 2).requires_grad
    finally:
        release.set()
        worker.join(timeout=10)
    assert other_saw["enabled"] is False


def test_a_new_thread_starts_with_grad_enabled():
    seen = {}
    with gradlab.no_grad():
        worker = threading.Thread(target=lambda: seen.update(on=gradlab.is_grad_enabled()))
        worker.start()
        worker.join(timeout=10)
    assert seen["on"] is True
