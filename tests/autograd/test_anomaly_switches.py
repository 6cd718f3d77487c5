"""Anomaly detection's switches: nesting, set_detect_anomaly, decorators, threads, the warning."""

from __future__ import annotations

import threading
import warnings

import pytest

from gradlab import autograd
from gradlab.autograd.anomaly_mode import forward_trace_of
from tests.autograd._anomaly import QUIET_ANOMALY, _zeros, check_detection_left_off

pytestmark = QUIET_ANOMALY
_detection_off_after = pytest.fixture(check_detection_left_off, autouse=True)


# --- switches: nesting, functions, decorators, threads ----------------------------------------

def test_nesting_restores_each_outer_setting():
    with autograd.detect_anomaly():
        with autograd.detect_anomaly(check_nan=False):
            assert autograd.is_anomaly_enabled() and not autograd.is_anomaly_check_nan_enabled()
            with autograd.set_detect_anomaly(False):
                assert not autograd.is_anomaly_enabled()
                assert forward_trace_of((_zeros() * 2).grad_fn) is None
            assert autograd.is_anomaly_enabled() and not autograd.is_anomaly_check_nan_enabled()
        assert autograd.is_anomaly_enabled() and autograd.is_anomaly_check_nan_enabled()
    assert not autograd.is_anomaly_enabled()


def test_mode_restores_after_an_error():
    with pytest.raises(ZeroDivisionError):
        with autograd.detect_anomaly(check_nan=False):
            _ = 1 / 0
    assert not autograd.is_anomaly_enabled() and autograd.is_anomaly_check_nan_enabled()


def test_set_detect_anomaly_as_a_call_and_as_a_context():
    autograd.set_detect_anomaly(True, check_nan=False)
    try:
        assert autograd.is_anomaly_enabled() and not autograd.is_anomaly_check_nan_enabled()
    finally:
        autograd.set_detect_anomaly(False)
    assert not autograd.is_anomaly_enabled() and autograd.is_anomaly_check_nan_enabled()
    with autograd.set_detect_anomaly(True):
        assert autograd.is_anomaly_enabled()
    assert not autograd.is_anomaly_enabled()
    autograd.set_anomaly_enabled(True, False)  # torch.set_anomaly_enabled
    assert autograd.is_anomaly_enabled() and not autograd.is_anomaly_check_nan_enabled()
    autograd.set_anomaly_enabled(False)
    assert not autograd.is_anomaly_enabled() and autograd.is_anomaly_check_nan_enabled()


def test_decorator_forms():
    @autograd.detect_anomaly()
    def with_parens():
        """Doc."""
        return autograd.is_anomaly_enabled(), autograd.is_anomaly_check_nan_enabled()

    @autograd.detect_anomaly
    def bare():
        return autograd.is_anomaly_enabled(), autograd.is_anomaly_check_nan_enabled()

    @autograd.detect_anomaly(check_nan=False)
    def no_nan_check():
        return autograd.is_anomaly_enabled(), autograd.is_anomaly_check_nan_enabled()

    assert not autograd.is_anomaly_enabled()  # decorating switches nothing on
    assert with_parens() == (True, True) and bare() == (True, True)
    assert no_nan_check() == (True, False)
    assert with_parens.__name__ == "with_parens" and with_parens.__doc__ == "Doc."
    assert not autograd.is_anomaly_enabled()


def test_one_decorator_reentered_by_recursion():
    @autograd.detect_anomaly(check_nan=False)
    def depth(n):
        if n:
            return depth(n - 1)
        return autograd.is_anomaly_enabled()

    assert depth(3)
    assert not autograd.is_anomaly_enabled() and autograd.is_anomaly_check_nan_enabled()


def test_one_decorated_function_in_two_threads_at_once():
    both_inside, worker_left = threading.Barrier(2), threading.Event()
    seen = []

    @autograd.detect_anomaly(check_nan=False)
    def hold(last):
        both_inside.wait(timeout=10)
        if last:
            worker_left.wait(timeout=10)
        return autograd.is_anomaly_enabled()

    def worker():
        seen.append(hold(last=False))  # leaves first
        seen.append((autograd.is_anomaly_enabled(), autograd.is_anomaly_check_nan_enabled()))
        worker_left.set()

    thread = threading.Thread(target=worker)
    thread.start()
    with autograd.detect_anomaly():
        assert hold(last=True)
        assert autograd.is_anomaly_check_nan_enabled()  # this block's setting came back
    thread.join()
    assert seen == [True, (False, True)]  # and the worker got its own back


def test_the_mode_is_per_thread():
    seen = {}

    def worker():
        seen["enabled"] = autograd.is_anomaly_enabled()
        seen["trace"] = forward_trace_of((_zeros() * 2).grad_fn)
        autograd.set_detect_anomaly(True)  # only for this thread
        seen["own"] = forward_trace_of((_zeros() * 2).grad_fn)

    with autograd.detect_anomaly():
        thread = threading.Thread(target=worker)
        thread.start()
        thread.join()
        assert autograd.is_anomaly_enabled()
    assert seen["enabled"] is False and seen["trace"] is None
    assert seen["own"] is not None and seen["own"].frames[0][2] == "worker"
    assert not autograd.is_anomaly_enabled()


# --- the warning ------------------------------------------------------------------------------

def test_enabling_warns_that_it_is_slow_once_per_line():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("default")  # Python's own: once per line that warns
        for _ in range(3):
            with autograd.detect_anomaly():
                pass
        autograd.set_detect_anomaly(True)
        autograd.set_detect_anomaly(False)
    messages = [w for w in caught if "Anomaly Detection has been enabled" in str(w.message)]
    assert len(messages) == 2  # the loop's line once, set_detect_anomaly(True) once
    assert all(w.filename == __file__ and w.category is UserWarning for w in messages)
    assert "increase the runtime" in str(messages[0].message)


def test_decorators_warn_at_the_decorated_line():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")

        @autograd.detect_anomaly
        def bare():
            pass

        @autograd.detect_anomaly(check_nan=False)
        def called():
            pass

    assert [(w.filename, w.lineno) for w in caught] == [
        (__file__, bare.__wrapped__.__code__.co_firstlineno),
        (__file__, called.__wrapped__.__code__.co_firstlineno)]


def test_turning_it_off_does_not_warn():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with autograd.set_detect_anomaly(False):
            pass
    assert caught == []
