"""Memory accounting: exact live bytes per device and category, peaks, summaries."""

from __future__ import annotations

import gc

import pytest

import gradlab


def category(name: str) -> int:
    return gradlab.memory_stats()[f"{name}_bytes"]


def test_allocation_and_free_are_counted_exactly():
    before = gradlab.memory_allocated()
    t = gradlab.zeros(1000)  # 4000 bytes of float32
    assert gradlab.memory_allocated() == before + 4000
    assert gradlab.memory_allocated("cpu") == gradlab.memory_allocated(gradlab.device("cpu"))
    del t
    assert gradlab.memory_allocated() == before


def test_views_do_not_double_count():
    base = gradlab.zeros(10, 10)
    before = gradlab.memory_allocated()
    views = [base.reshape(100), base.T, base.transpose(0, 1), base.detach()]
    assert gradlab.memory_allocated() == before
    del views


def test_peak_and_reset():
    gradlab.reset_peak_memory_stats()
    start = gradlab.memory_allocated()
    assert gradlab.max_memory_allocated() == start
    t = gradlab.zeros(2500)  # 10 kB
    del t
    assert gradlab.memory_allocated() == start
    assert gradlab.max_memory_allocated() == start + 10000
    gradlab.reset_peak_memory_stats()
    assert gradlab.max_memory_allocated() == start


def test_memory_stats_and_summary():
    stats = gradlab.memory_stats()
    for key in ("allocated_bytes", "peak_bytes", "parameter_bytes", "gradient_bytes",
                "activation_bytes", "optimizer_bytes", "other_bytes"):
        assert key in stats and stats[key] >= 0
    parts = sum(stats[f"{c}_bytes"] for c in ("parameter", "gradient", "activation",
                                              "optimizer", "other"))
    assert parts == stats["allocated_bytes"]
    summary = gradlab.memory_summary()
    assert summary.startswith("gradlab memory on cpu")
    for word in ("allocated", "peak", "gradient", "activation", "other"):
        assert word in summary


def test_saved_for_backward_counts_as_activation():
    x = gradlab.ones(1000, requires_grad=True)  # 4000 bytes
    start = category("activation")
    h = x * 2  # mul by a number saves x
    assert category("activation") == start + 4000
    y = h * h  # saves h
    assert category("activation") == start + 8000
    y.sum().backward()
    assert category("activation") == start  # backward freed what it saved
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        _ = y.grad_fn.saved_tensors


def test_gradient_category_counts_grad():
    gc.collect()  # garbage from earlier tests must not be freed inside this one
    start = category("gradient")
    x = gradlab.ones(500, requires_grad=True)
    (x * 3).sum().backward()
    assert category("gradient") == start + 2000
    (x * 3).sum().backward()  # accumulates in place: no new bytes
    assert category("gradient") == start + 2000
    x.grad = None
    gc.collect()
    assert category("gradient") == start


def test_retain_graph_keeps_activations_until_the_last_backward():
    x = gradlab.ones(100, requires_grad=True)
    start = category("activation")
    y = (x * x).sum()
    y.backward(retain_graph=True)
    assert category("activation") == start + 400
    y.backward()
    assert category("activation") == start


def test_dropping_the_output_frees_the_graph_and_its_memory():
    x = gradlab.ones(1000, requires_grad=True)
    before = gradlab.memory_allocated()
    y = (x * 2).exp() * 3
    assert gradlab.memory_allocated() > before
    del y  # no gc.collect(): the graph has no cycles, reference counting frees it
    assert gradlab.memory_allocated() == before


def test_a_graph_freed_by_the_cycle_collector_balances_the_books():
    """In a cycle, the collector may finalize a storage before the node that saved it."""
    gc.collect()  # garbage from earlier tests must not be freed inside this one
    start_live, start_act = gradlab.memory_allocated(), category("activation")
    x = gradlab.ones(1000, requires_grad=True)
    y = x * x
    y.self_reference = y  # a cycle: y -> y
    del x, y
    gc.collect()
    assert gradlab.memory_allocated() == start_live
    assert category("activation") == start_act


def test_dropping_an_unused_graph_returns_activation_bytes():
    x = gradlab.ones(1000, requires_grad=True)
    start = category("activation")
    y = x * x
    assert category("activation") == start + 4000
    del y
    assert category("activation") == start


def test_cuda_memory_figures_are_zero_without_a_gpu():
    if gradlab.cuda.is_available():
        pytest.skip("a GPU is present")
    assert gradlab.cuda.memory_allocated() == 0
    assert gradlab.memory_allocated("cuda:1") == 0
    assert gradlab.cuda.memory_summary().startswith("gradlab memory on cuda:0")


def test_all_device_stats_lists_every_device_that_held_a_tensor():
    x = gradlab.ones(10)
    found = {str(s.device): s for s in gradlab.memory.all_device_stats()}
    assert "cpu" in found
    assert found["cpu"].live == gradlab.memory_allocated("cpu") >= x.nbytes


def test_private_arrays_saved_for_backward_count_as_activation():
    """conv2d keeps its im2col columns and dropout its mask: neither is an input or an
    output, and both must show in the activation figure until backward frees them."""
    import gradlab.nn.functional as F

    gc.collect()
    x = gradlab.randn(16, 1, 12, 12)
    w = gradlab.randn(4, 1, 3, 3, requires_grad=True)
    before = gradlab.memory.memory_stats()["activation_bytes"]
    y = F.conv2d(x, w)
    columns = 16 * 10 * 10 * 9 * 4  # one row of 9 float32 values per output pixel
    held = gradlab.memory.memory_stats()["activation_bytes"] - before
    assert held == x.nbytes + w.nbytes + columns  # the inputs it saved, and the columns
    y.sum().backward()
    assert gradlab.memory.memory_stats()["activation_bytes"] == before

    h = gradlab.randn(1000, requires_grad=True)
    before = gradlab.memory.memory_stats()["activation_bytes"]
    out = F.dropout(h, 0.5)
    assert gradlab.memory.memory_stats()["activation_bytes"] - before >= 1000  # the mask
    del out
    gc.collect()
    assert gradlab.memory.memory_stats()["activation_bytes"] == before
