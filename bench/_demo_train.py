"""The demo's training loop as a script, for bench/debug_overhead.py.

    python bench/_demo_train.py ITERATIONS OUT.json

Trains the two-moons MLP (gradlab.examples.moons_mlp: 2-32-32-2, batch 32,
SGD with momentum) for ITERATIONS steps and writes the wall time of each
step, data loading excluded, to OUT.json. The same file runs bare, under a
debug Session and inside the app, so all three time exactly the same work.
"""

import json
import sys
import time

import gradlab
from gradlab import nn
from gradlab.examples import moons_mlp
from gradlab.utils.data import DataLoader

iterations, out_path = int(sys.argv[1]), sys.argv[2]
gradlab.manual_seed(0)
train_set, _ = moons_mlp.make_data()
loader = DataLoader(train_set, batch_size=32, shuffle=True)
model = moons_mlp.make_model()
optimizer = gradlab.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
loss_fn = nn.CrossEntropyLoss()

times: list[float] = []
while len(times) < iterations:
    for X, y in loader:
        start = time.perf_counter()
        optimizer.zero_grad()
        loss = loss_fn(model(X), y)
        loss.backward()
        optimizer.step()
        times.append(time.perf_counter() - start)
        if len(times) == iterations:
            break
with open(out_path, "w") as f:
    json.dump(times, f)
