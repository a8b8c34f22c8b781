#!/usr/bin/env python3
"""Writes metrics/tests/fixtures/scipy_float_edges.json: scipy's Pearson, Spearman and Kendall on
inputs at the edges of the float range (subnormal, huge, mixed magnitudes), the vectors the
metrics crate's parity test checks (issue 53: correlations exact at the edges of the range).

    pip install scipy==1.17.1 numpy && python3 scripts/make_float_edges_fixture.py
"""
import json
import math
from pathlib import Path

import numpy as np
import scipy
from scipy import stats

base_x = [1.0, 2.0, 3.5, 4.0, 7.0, 6.5, 9.0, 11.0]
base_y = [2.0, 1.5, 4.0, 3.0, 8.0, 7.5, 8.5, 12.0]


def scaled(v, s):
    return [a * s for a in v]


cases = {
    "subnormal (1e-310 scale)": (scaled(base_x, 1e-310), scaled(base_y, 1e-310)),
    "smallest subnormals": ([5e-324 * k for k in (1, 2, 3, 5, 4, 8, 7, 9)], [5e-324 * k for k in (2, 1, 4, 3, 6, 9, 8, 7)]),
    "subnormal against ordinary": (scaled(base_x, 1e-312), base_y),
    "tiny normal (1e-300 scale)": (scaled(base_x, 1e-300), scaled(base_y, 1e-300)),
    "huge (1e306 scale)": (scaled(base_x, 1e306), scaled(base_y, 1e306)),
    "huge deviations (reciprocal subnormal)": ([-5e307, 5e307, 3e307, -3e307, 1e307, -1e307, 2e307, 0.0], [1.0, 4.0, 3.0, 2.0, 2.5, 1.5, 3.5, 2.0]),
    "mixed magnitudes (scipy's comment)": ([-5e210, 5e210, 3e200, -3e200], [1.0, 3.0, 2.5, 0.5]),
    "mixed magnitudes in one series": ([1e-300, 1e300, 1.0, 1e-10, 1e10, 5.0, 1e200, 1e-200], base_y),
    "sum overflows": ([1.7e308, 1.7e308, 1.0, 2.0], [1.0, 2.0, 3.0, 4.0]),
}


def num(v):
    v = float(v)
    return None if math.isnan(v) else v


out = {"scipy_version": scipy.__version__, "numpy_version": np.__version__, "cases": []}
for name, (x, y) in cases.items():
    row = {"name": name, "x": x, "y": y}
    for kind, f in (("pearson", stats.pearsonr), ("spearman", stats.spearmanr), ("kendall", stats.kendalltau)):
        with np.errstate(all="ignore"):
            import warnings

            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                r = f(np.asarray(x), np.asarray(y))
        row[kind] = {"statistic": num(r.statistic), "pvalue": num(r.pvalue)}
    out["cases"].append(row)
path = Path(__file__).resolve().parents[1] / "metrics/tests/fixtures/scipy_float_edges.json"
path.write_text(json.dumps(out, indent=1) + "\n")
print(f"wrote {path}")
