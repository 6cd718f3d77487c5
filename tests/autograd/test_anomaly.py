"""Anomaly detection: what it reports (NaN and Inf gradients, errors raised inside backward,
forward traces), also against PyTorch. The switches themselves: test_anomaly_switches.py."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

import gradlab
from gradlab import autograd
from gradlab.autograd import anomaly_mode
from gradlab.autograd.anomaly_mode import forward_trace_of
from tests.autograd._anomaly import QUIET_ANOMALY, _zeros, check_detection_left_off
from tests.oracle import needs_torch, torch

pytestmark = QUIET_ANOMALY
_detection_off_after = pytest.fixture(check_detection_left_off, autouse=True)


# These helpers stay in this file: the tests check that traces point at their lines here.
def _op_line(func) -> int:
    """The line of the one statement in the body of a helper below."""
    return func.__code__.co_firstlineno + 1


def _sqrt_times_zero(x):
    return (x.sqrt() * 0).sum()


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


def test_decorated_function_raises_on_nan():
    @autograd.detect_anomaly
    def step(x):
        _sqrt_times_zero(x).backward()

    with pytest.raises(RuntimeError, match="'SqrtBackward0' returned nan values"):
        step(_zeros())


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
        # (Memory events are left out: a collection of earlier tests' garbage may free
        # storages in the middle of this backward.)
        return [type(e).__name__ for e in seen if type(e) is not gradlab.events.Memory]

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
