"""Lesson 20: mixed precision: float16, autocast and loss scaling.

Four tasks, all marked TODO:

1. underflow_fraction(grads, scale): the share of a gradient that float16 rounds to zero.
2. autocast_dtype(op, input_dtype, device_type, fast_dtype): the dtype autocast gives an op.
3. scaled_step(model, loss_fn, x, y, optimizer, scale): one step of loss scaling, by hand.
4. update_scale(scale, found_inf, tracker, ...): GradScaler's dynamic rule.

Check them with `gradlab check 20` (or press k in the app). Press r in the app to run
this file under the debugger: it trains a small network in mixed precision.
"""

import math

import gradlab
import gradlab.nn.functional as F
from gradlab import nn
from gradlab.amp.op_lists import rule

HALF = (gradlab.float16, gradlab.bfloat16)


def underflow_fraction(grads, scale=1.0):
    """The fraction of the nonzero entries of ``grads`` (a float32 tensor) that become 0
    when ``grads * scale`` is rounded to float16. ``grads`` itself is left as it is."""
    nonzero = grads != 0
    count = int(nonzero.sum())
    if count == 0:
        return 0.0
    lost = ((grads * scale).to(gradlab.float16) == 0) & nonzero
    return int(lost.sum()) / count


def autocast_dtype(op, input_dtype, device_type, fast_dtype):
    """The dtype op ``op`` (a gradlab op name such as "linear" or "softmax") computes in,
    and returns, when its one floating input has ``input_dtype`` and it runs under
    ``gradlab.autocast(device_type, dtype=fast_dtype)``."""
    how = rule(device_type, op)
    if how == "lower" and input_dtype != gradlab.float64:
        return fast_dtype
    if how == "float32" and input_dtype in HALF:
        return gradlab.float32
    return input_dtype


def scaled_step(model, loss_fn, x, y, optimizer, scale):
    """One training step with the loss scaled by ``scale`` (a power of two): forward under
    float16 autocast, backward from loss × scale, gradients divided by scale, and the
    optimizer's step only if every gradient is finite. Whether it stepped."""
    optimizer.zero_grad()
    with gradlab.autocast(x.device.type, dtype=gradlab.float16):
        loss = loss_fn(model(x), y)
    (loss * scale).backward()
    finite = True
    with gradlab.no_grad():
        for p in model.parameters():
            if p.grad is not None:
                finite = finite and bool(p.grad.isfinite().all())
                p.grad.div_(scale)
    if finite:
        optimizer.step()
    return finite


def update_scale(scale, found_inf, tracker, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000):
    """GradScaler's rule after one step: ``(new scale, new tracker)``. ``tracker`` counts
    the steps in a row without an inf/NaN gradient."""
    if found_inf:
        return scale * backoff_factor, 0
    tracker += 1
    if tracker == growth_interval:
        return scale * growth_factor, 0
    return scale, tracker


if __name__ == "__main__":
    # What the app runs when you press r: watch the Training panel (grad_scale, loss) and
    # the casts in the Graph. The model's weights stay float32; autocast casts them.
    gradlab.manual_seed(0)
    images, labels = gradlab.datasets.load_digits()
    images = images.flatten(1)
    model = nn.Sequential(nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 10))
    optimizer = gradlab.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    # A scale far too large to start with, and growth after 10 clean steps, so that a short
    # run shows the whole rule (GradScaler's defaults are 2**16 and 2000 steps).
    scaler = gradlab.amp.GradScaler("cpu", init_scale=2.0**24, growth_interval=10)
    for step in range(60):
        rows = gradlab.randint(0, len(labels), (128,))
        optimizer.zero_grad()
        with gradlab.autocast("cpu", dtype=gradlab.float16):
            logits = model(images[rows])                  # linear: float16
            loss = F.cross_entropy(logits, labels[rows])  # a loss: float32
        scaler.scale(loss).backward()                     # backward runs outside autocast
        scale = scaler.get_scale()
        scaler.step(optimizer)                            # skipped if a gradient overflowed
        scaler.update()                                   # halve the scale, or grow it
        if step % 10 == 0 or scaler.get_scale() < scale:
            skipped = ": a gradient overflowed, step skipped" if scaler.get_scale() < scale else ""
            print(f"step {step:2d}: loss {loss.item():.3f}, scale 2**{math.log2(scale):g}"
                  f"{skipped}")
    print("dtypes: logits", logits.dtype, "loss", loss.dtype, "weight.grad",
          model[0].weight.grad.dtype)

    # Your functions. The true (float32) gradients of the trained model: how many would
    # float16 lose, unscaled and scaled by 2**16?
    x, y = images[:256], labels[:256]
    model.zero_grad()
    F.cross_entropy(model(x), y).backward()
    for name, p in model.named_parameters():
        print(f"{name}: {underflow_fraction(p.grad):.1%} of its gradient underflows in "
              f"float16, {underflow_fraction(p.grad, 2.0**16):.1%} when scaled by 2**16")
    for op in ("linear", "exp", "softmax", "cross_entropy"):
        print(f"{op} of a float16 activation under float16 autocast: on cpu",
              autocast_dtype(op, gradlab.float16, "cpu", gradlab.float16), "on cuda",
              autocast_dtype(op, gradlab.float16, "cuda", gradlab.float16))
    for scale in (2.0**16, 2.0**40):
        stepped = scaled_step(model, F.cross_entropy, x, y, optimizer, scale)
        print(f"scaled_step with scale 2**{math.log2(scale):g}: "
              f"{'stepped' if stepped else 'skipped'}")
    scale, tracker = 2.0**16, 0
    for found_inf in (False, False, True, False, False, False):
        scale, tracker = update_scale(scale, found_inf, tracker, growth_interval=3)
        print(f"update_scale after {'an overflow' if found_inf else 'a clean step'}: "
              f"scale 2**{math.log2(scale):g}, tracker {tracker}")
