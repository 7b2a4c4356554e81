"""irgrid.numba_start: numba's first kernel load without SciPy (at once, or at numba's start-up), and
SciPy still usable after it.

Each check runs in a fresh interpreter: what is imported is a property of the process.
"""

from __future__ import annotations

import json
import os
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


BUILD_CHILD = """
import json, sys
from pathlib import Path
import pyarrow as pa
import pyarrow.parquet as pq
from irgrid.index import build_index
root = Path(sys.argv[1])
(root / "docs").mkdir()
pq.write_table(pa.table({"docno": ["d1", "d2", "d3"], "text": ["alpha beta", "beta gamma gamma", "Delta, alpha!"]}),
               root / "docs" / "part-0000.parquet")
stats = build_index(root / "docs", root / "index", {"stemmer": "none", "stopwords": "none"}, num_buckets=2,
                    scheduler="threads", progress=False)
print(json.dumps({"num_docs": stats["num_docs"], "num_terms": stats["num_terms"],
                  "loaded": {name: name in sys.modules for name in ("scipy.linalg", "numba.np.arraymath")}}))
"""


def test_index_build_loads_its_kernels_without_scipy(tmp_path):
    out = subprocess.run([sys.executable, "-c", BUILD_CHILD, str(tmp_path)], check=True, capture_output=True,
                         text=True)
    result = json.loads(out.stdout.strip().splitlines()[-1])
    # alpha, beta, gamma, delta
    assert (result["num_docs"], result["num_terms"]) == (3, 4)
    # the build's kernels ran (numba's registries installed) and SciPy's linear algebra was never imported
    assert result["loaded"] == {"scipy.linalg": False, "numba.np.arraymath": True}


HOOK_CHILD = """
import json, sys
import numpy as np
from types import SimpleNamespace
from numba.core.cpu import CPUContext
from irgrid.numba_start import import_arraymath_at_numba_start
from irgrid.retrieve import Scorer
loaded = lambda: {name: name in sys.modules for name in ("scipy.linalg", "numba.np.arraymath")}
before = loaded()
index = SimpleNamespace(doc_lengths=np.array([2, 1], np.int32), doc_unique_terms=np.array([2, 1], np.int32),
                        docno_rank=np.array([0, 1], np.int32), docnos=["d1", "d2"],
                        stats={"num_docs": 2, "total_length": 3, "avg_doc_length": 1.5})
Scorer(index)  # hooks numba's start-up, imports nothing yet
hooked = CPUContext.load_additional_registries
import_arraymath_at_numba_start()  # a second time: the same hook, not one around the other
after_scorer = loaded()
from irgrid.retrieve.ranking import kth_largest
kth = float(kth_largest(np.array([3.0, 1.0, 4.0, 1.0, 5.0]), 2))
print(json.dumps({"before": before, "after_scorer": after_scorer, "kth": kth, "after_kernel": loaded(),
                  "hooked_once": CPUContext.load_additional_registries is hooked,
                  "probe_entry_left": "scipy.linalg.cython_blas" in sys.modules}))
"""


def test_the_scorer_leaves_numbas_start_to_the_first_jit_call_and_it_skips_scipy():
    out = subprocess.run([sys.executable, "-c", HOOK_CHILD], check=True, capture_output=True, text=True,
                         env={**os.environ, "IRGRID_AOT": "0"})
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["before"] == result["after_scorer"] == {"scipy.linalg": False, "numba.np.arraymath": False}
    assert result["kth"] == 4.0  # the second largest of 3, 1, 4, 1, 5
    # the JIT kernel's call started numba, which imported its array functions through the hook: no SciPy
    assert result["after_kernel"] == {"scipy.linalg": False, "numba.np.arraymath": True}
    assert result["hooked_once"] and not result["probe_entry_left"]
