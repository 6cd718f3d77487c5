"""Anomaly detection: detect_anomaly / set_detect_anomaly, NaN checks, forward traces."""

from __future__ import annotations

import re
import threading
import warnings

import numpy as np
import pytest

import gradlab
from gradlab import autograd
from gradlab.autograd import anomaly_mode
from gradlab.autograd.anomaly_mode import forward_trace_of
from tests.oracle import needs_torch, torch

pytestmark = pytest.mark.filterwarnings(
    "ignore:Anomaly Detection has been enabled", "ignore:invalid value encountered",
    "ignore:divide by zero encountered")


@pytest.fixture(autouse=True)
def _detection_off_after():
    yield
    assert not autograd.is_anomaly_enabled(), "a test left anomaly detection on"
    assert autograd.is_anomaly_check_nan_enabled()
    assert anomaly_mode.anomaly.running is None


def _op_line(func) -> int:
    """The line of the one statement in the body of a helper below."""
    return func.__code__.co_firstlineno + 1


def _sqrt_times_zero(x):
    return (x.sqrt() * 0).sum()


def _zeros():
    return gradlab.zeros(3, requires_grad=True)


class ZeroOverZero(autograd.Function):
    """A custom op whose backward divides 0 by 0 (for a scale given as a number)."""

    @staticmethod
    def forward(ctx, scale, a):
        return a * scale

    @staticmethod
    def backward(ctx, grad):
        return None, grad * 0 / 0


def _zero_over_zero(x):
    return ZeroOverZero.apply(2.0, x).sum()


class Fails(autograd.Function):
    @staticmethod
    def forward(ctx, a):
        return a.clone()

    @staticmethod
    def backward(ctx, grad):
        raise ValueError("Some error in backward")


def _fails(x):
    return Fails.apply(x).sum()


# --- NaN gradients ----------------------------------------------------------------------------

def test_nan_from_backward_names_the_node_and_the_user_line():
    x = _zeros()
    with autograd.detect_anomaly():
        y = _sqrt_times_zero(x)
        with pytest.raises(RuntimeError, match=re.escape(
                "Function 'SqrtBackward0' returned nan values in its 0th output")) as info:
            y.backward()
    message = str(info.value)
    assert f'File "{__file__}", line {_op_line(_sqrt_times_zero)}, in _sqrt_times_zero' in message
    assert "return (x.sqrt() * 0).sum()" in message  # the source line itself
    assert "'sqrt'" in message and "shape (3,)" in message
    assert "Fix:" in message and "clamp" in message
    assert x.grad is None  # the error stopped backward before the leaf


def test_nan_from_a_custom_backward_counts_tensor_arguments_only():
    x = _zeros()
    with autograd.detect_anomaly():
        y = _zero_over_zero(x)
        # The number 2.0 is argument 0, but PyTorch's node has no output for it.
        with pytest.raises(RuntimeError, match=re.escape(
                "Function 'ZeroOverZeroBackward0' returned nan values in its 0th output")) as info:
            y.backward()
    assert f"line {_op_line(_zero_over_zero)}, in _zero_over_zero" in str(info.value)


def test_nan_output_index_counts_tensors_that_need_no_grad():
    a = gradlab.zeros(3)  # a tensor argument without grad: output 0 of the node, None
    b = _zeros()
    with autograd.detect_anomaly():
        y = (a / b).sum()
        with pytest.raises(RuntimeError, match=re.escape(
                "Function 'DivBackward0' returned nan values in its 1th output")):
            y.backward()


def test_no_error_when_disabled():
    x = _zeros()
    _sqrt_times_zero(x).backward()
    assert np.isnan(x.grad.numpy()).all()
    assert not autograd.is_anomaly_enabled()


def test_check_nan_false_records_but_lets_nan_through():
    x = _zeros()
    with autograd.detect_anomaly(check_nan=False):
        assert autograd.is_anomaly_enabled() and not autograd.is_anomaly_check_nan_enabled()
        y = _sqrt_times_zero(x)
        y.backward()
    assert np.isnan(x.grad.numpy()).all()
    assert forward_trace_of(y.grad_fn) is not None  # the trace is still recorded


def test_backward_outside_the_mode_is_not_checked():
    x = _zeros()
    with autograd.detect_anomaly():
        y = _sqrt_times_zero(x)
    y.backward()  # what counts is whether detection is on when backward runs
    assert np.isnan(x.grad.numpy()).all()


def test_forward_outside_the_mode_says_no_trace_was_recorded():
    x = _zeros()
    y = _sqrt_times_zero(x)
    with autograd.detect_anomaly():
        with pytest.raises(RuntimeError, match=r"(?s)returned nan values.*No forward trace "
                           r"was recorded.*inside detect_anomaly\(\) too"):
            y.backward()


def test_nan_in_a_second_order_graph_names_the_backward_that_recorded_it():
    x = gradlab.zeros(2, dtype=gradlab.float64, requires_grad=True)
    with autograd.detect_anomaly(check_nan=False):  # places recorded, values not checked
        y = x.sqrt().sum()
        (g,) = autograd.grad(y, x, create_graph=True)  # 0.5 / sqrt(0) = inf
    with autograd.detect_anomaly():
        with pytest.raises(RuntimeError, match=r"(?s)'DivBackward0' returned nan values in its "
                           r"1th output.*autograd\.grad\(y, x.*recorded by the backward of "
                           r"SqrtBackward0, whose op was created here.*y = x\.sqrt\(\)\.sum\(\)"):
            (g * 0).sum().backward()


def test_finite_gradients_pass_and_match_the_mode_off():
    x = gradlab.tensor([1.0, 4.0], requires_grad=True)
    with autograd.detect_anomaly():
        (x.sqrt() * x).sum().backward()
    expected = 1.5 * np.sqrt([1.0, 4.0])  # d/dx x^1.5
    np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-6)


def test_checking_emits_no_op_events():
    """The NaN scan works on raw arrays: the debugger sees the same ops as without it."""
    def op_events(detect: bool) -> list:
        seen = []
        x = gradlab.tensor([1.0, 4.0], requires_grad=True)
        with autograd.set_detect_anomaly(detect):
            y = (x.sqrt() * x).sum()
            with gradlab.events.subscribe(seen.append):
                y.backward()
        return [type(e).__name__ for e in seen]

    assert op_events(True) == op_events(False)
    assert "BackwardNode" in op_events(True)


# --- errors raised inside backward ------------------------------------------------------------

def test_error_inside_a_custom_backward_gets_the_forward_trace_as_a_note():
    x = _zeros()
    with autograd.detect_anomaly():
        y = _fails(x)
        with pytest.raises(ValueError, match="Some error in backward") as info:
            y.backward()
    (note,) = info.value.__notes__
    assert note.startswith("Error detected in FailsBackward0 (op 'fails'")
    assert f'"{__file__}", line {_op_line(_fails)}, in _fails' in note
    assert "return Fails.apply(x).sum()" in note


def test_error_without_the_mode_has_no_note():
    x = _zeros()
    with pytest.raises(ValueError, match="Some error in backward") as info:
        _fails(x).backward()
    assert getattr(info.value, "__notes__", None) is None


def test_inplace_change_of_a_saved_tensor_points_at_the_op_that_saved_it():
    x = gradlab.ones(3, requires_grad=True)
    with autograd.detect_anomaly():
        y = x.exp()  # exp saves its output
        y.mul_(2)
        with pytest.raises(RuntimeError, match="modified by an in-place operation") as info:
            y.sum().backward()
    (note,) = info.value.__notes__
    assert "Error detected in ExpBackward0" in note and "y = x.exp()" in note


# --- what is recorded -------------------------------------------------------------------------

def test_nothing_is_recorded_when_disabled():
    y = _zeros() * 2
    assert forward_trace_of(y.grad_fn) is None
    assert "_forward_trace" not in y.grad_fn.__dict__


def _recurse(x, depth):
    if depth == 0:
        return x * 2
    return _recurse(x, depth - 1)


def test_trace_keeps_the_innermost_user_frames_only():
    with autograd.detect_anomaly():
        y = _recurse(_zeros(), 3 * anomaly_mode.STACK_DEPTH)
    frames = forward_trace_of(y.grad_fn).frames
    assert len(frames) == anomaly_mode.STACK_DEPTH
    assert frames[0] == (__file__, _op_line(_recurse) + 1, "_recurse")  # innermost first


class Scaled(gradlab.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = gradlab.nn.Linear(2, 2)

    def forward(self, x):
        return self.linear(x)


def test_trace_skips_gradlab_frames():
    model = Scaled()
    with autograd.detect_anomaly():
        y = model(gradlab.ones(1, 2))
    frames = forward_trace_of(y.grad_fn).frames
    gradlab_dir = anomaly_mode._GRADLAB_DIR
    assert not any(f[0].startswith(gradlab_dir) for f in frames)
    assert frames[0][0] == __file__ and frames[0][2] == "forward"  # Module.__call__ skipped
    assert frames[1][2] == "test_trace_skips_gradlab_frames"


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


def test_decorated_function_raises_on_nan():
    @autograd.detect_anomaly
    def step(x):
        _sqrt_times_zero(x).backward()

    with pytest.raises(RuntimeError, match="'SqrtBackward0' returned nan values"):
        step(_zeros())


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


# --- against PyTorch: the same situations raise, at the same node and output ----------------

TORCH_CASES = {
    "sqrt_at_0_times_0": lambda lib, x: (x.sqrt() * 0).sum(),
    "zero_over_zero": lambda lib, x: (x / x).sum(),
    "log_at_0_times_0": lambda lib, x: (x.log() * 0).sum(),
    "where_does_not_guard_sqrt": lambda lib, x: lib.where(x > 0, x.sqrt(), 0.0).sum(),
    "nan_in_forward": lambda lib, x: (x * float("nan")).sum(),
    "finite": lambda lib, x: (x * 2 + 1).exp().sum(),
}


def _outcome(lib, fn, check_nan=True):
    x = lib.zeros(3, dtype=lib.float64, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PyTorch reports the forward trace as a warning
        with lib.autograd.detect_anomaly(check_nan=check_nan):
            try:
                fn(lib, x).backward()
            except RuntimeError as error:
                found = re.match(r"Function '(\w+)' returned nan values in its (\d+)th output",
                                 str(error))
                assert found, str(error)
                return found.groups()
    return None


@needs_torch
@pytest.mark.parametrize("case", list(TORCH_CASES))
def test_raises_where_torch_raises(case):
    fn = TORCH_CASES[case]
    outcome = _outcome(gradlab, fn)
    assert outcome == _outcome(torch, fn)
    assert (outcome is None) == (case == "finite")
    assert _outcome(gradlab, fn, check_nan=False) is None is _outcome(torch, fn, check_nan=False)


@needs_torch
def test_error_in_a_custom_backward_raises_like_torch():
    class TorchFails(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a.clone()

        @staticmethod
        def backward(ctx, grad):
            raise ValueError("Some error in backward")

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with torch.autograd.detect_anomaly():
            with pytest.raises(ValueError, match="Some error in backward"):
                TorchFails.apply(torch.zeros(3, requires_grad=True)).sum().backward()
    with autograd.detect_anomaly():
        with pytest.raises(ValueError, match="Some error in backward"):
            _fails(_zeros()).backward()


@needs_torch
def test_flags_like_torch():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with torch.autograd.set_detect_anomaly(True, check_nan=False):
            expected = (torch.is_anomaly_enabled(), torch.is_anomaly_check_nan_enabled())
        with autograd.set_detect_anomaly(True, check_nan=False):
            got = (autograd.is_anomaly_enabled(), autograd.is_anomaly_check_nan_enabled())
    assert got == expected == (True, False)
    assert (torch.is_anomaly_enabled(), torch.is_anomaly_check_nan_enabled()) == (False, True)


def test_the_switches_are_at_the_top_level_as_in_pytorch():
    assert gradlab.is_anomaly_enabled is gradlab.autograd.is_anomaly_enabled
    assert gradlab.is_anomaly_check_nan_enabled is gradlab.autograd.is_anomaly_check_nan_enabled
    assert gradlab.set_anomaly_enabled is gradlab.autograd.set_anomaly_enabled


def test_an_infinite_gradient_is_named_too():
    """PyTorch checks NaN only; gradlab also stops at an Inf (sqrt at 0), one step earlier."""
    x = gradlab.tensor([0.0, 4.0], dtype=gradlab.float64, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with autograd.detect_anomaly():
            y = x.sqrt().sum()
            with pytest.raises(RuntimeError, match=r"'SqrtBackward0' returned inf values in its "
                                                   r"0th output"):
                y.backward()
