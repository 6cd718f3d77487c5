"""NaN and inf come quietly out of gradlab's ops, as out of PyTorch's; the user's own
NumPy code keeps its warnings."""

from __future__ import annotations

import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent("""
    import numpy as np
    import gradlab

    x = gradlab.tensor([-1.0, 0.0, 2.0], requires_grad=True)
    y = (x.log() + x.sqrt() + 1 / x).sum()   # nan, -inf, inf on the way
    y.backward()                             # and in the gradients
    gradlab.tensor([float("inf"), -float("inf")]).sum()  # inf - inf in a reduction
    print("gradlab done", y.item() != y.item())
    np.log(np.array([-1.0]))                 # the user's own NumPy call
""")


def test_gradlab_ops_make_nan_without_numpy_warnings_but_user_numpy_still_warns():
    # A fresh interpreter with every warning shown once per place (-W default), so the
    # pytest process's filters and warning registries can't hide or show anything.
    done = subprocess.run([sys.executable, "-W", "default", "-c", SCRIPT],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "gradlab done True" in done.stdout
    warnings = [line for line in done.stderr.splitlines() if "RuntimeWarning" in line]
    assert len(warnings) == 1 and warnings[0].startswith("<string>:10: RuntimeWarning: "
                                                         "invalid value encountered in log")
