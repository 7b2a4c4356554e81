"""irgrid.numba_start: numba's first kernel load without SciPy, and SciPy still usable after it.

Each check runs in a fresh interpreter: what is imported is a property of the process.
"""

from __future__ import annotations

import json
import subprocess
import sys

CHILD = """
import json, sys
import numpy as np
from irgrid.numba_start import import_arraymath_without_blas_probe
import_arraymath_without_blas_probe()
from irgrid.retrieve.ranking import kth_largest
kth = float(kth_largest(np.array([3.0, 1.0, 4.0, 1.0, 5.0]), 2))
after_kernel = {name: name in sys.modules for name in ("scipy.linalg", "numba.np.arraymath")}
probe_entry = sys.modules.get("scipy.linalg.cython_blas", "absent")
import scipy.linalg
from numba import njit

@njit
def dot(a, b):
    return np.dot(a, b)

print(json.dumps({"kth": kth, "after_kernel": after_kernel, "probe_entry_left": probe_entry is None,
                  "solve": scipy.linalg.solve(np.eye(2) * 2.0, np.ones(2)).tolist(),
                  "dot": float(dot(np.arange(3.0), np.arange(3.0)))}))
"""


def run_child() -> dict:
    out = subprocess.run([sys.executable, "-c", CHILD], check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_kernel_loads_without_scipy_and_scipy_works_after():
    result = run_child()
    assert result["kth"] == 4.0  # the second largest of 3, 1, 4, 1, 5
    assert result["after_kernel"] == {"scipy.linalg": False, "numba.np.arraymath": True}
    assert not result["probe_entry_left"]
    assert result["solve"] == [0.5, 0.5]
    assert result["dot"] == 5.0  # 0*0 + 1*1 + 2*2: numba's np.dot, through SciPy's BLAS
