#!/usr/bin/env python3
"""Achieved FLOP/s of the SLM benches against this machine's sgemm peak.

1. Measures the float32 matrix-multiply peak with numpy/OpenBLAS (square sizes 256-2048,
   best of several runs, all cores).
2. Counts the floating-point operations of one forward pass of the bench model analytically
   (`benches/slm.rs`: batch 16, 64 tokens, two graphs of 32 nodes, 4-label paths, d_model 64,
   feed-forward 128, 2 layers per encoder); a multiply-add is 2 FLOPs, a training step is
   counted as 3 forward passes (forward + backward of inputs and weights).
3. Reads criterion's median times of `slm/train_step_b16` and `slm/inference_b16` from
   `target/criterion` (run `cargo bench -p dialeval-benches --bench slm` first) and prints
   GFLOP/s and the fraction of the sgemm peak.

    python3 -m venv .venv && .venv/bin/pip install numpy
    .venv/bin/python scripts/slm_flops.py [CRITERION_DIR]
"""
import json
import os
import sys
import time

import numpy as np

B, S, N, P, D, FF, LAYERS = 16, 64, 32, 4, 64, 128, 2


def sgemm_peak():
    best = 0.0
    for n in (256, 512, 1024, 2048):
        a = np.random.default_rng(0).standard_normal((n, n), dtype=np.float32)
        b = np.random.default_rng(1).standard_normal((n, n), dtype=np.float32)
        a @ b  # warm up
        reps = max(3, int(2e9 / (2 * n**3)))
        for _ in range(3):
            t = time.perf_counter()
            for _ in range(reps):
                a @ b
            best = max(best, 2 * n**3 * reps / (time.perf_counter() - t))
    return best


def forward_flops():
    """Per-block FLOPs of one forward pass (matmuls and the pairwise attention terms)."""
    linear = lambda rows, d_in, d_out: 2 * rows * d_in * d_out
    text_layer = (
        4 * linear(B * S, D, D)  # q, k, v, output projections
        + 2 * (2 * B * S * S * D)  # scores and weighted sum over all heads
        + linear(B * S, D, FF) + linear(B * S, FF, D)
    )
    pairs = B * N * N
    graph_layer = (
        4 * linear(B * N, D, D)
        + 2 * linear(pairs, D, D)  # relation-path key and value projections over every node pair
        + 2 * pairs * D  # k_j + r_ij and v_j + r_ij
        + 2 * (2 * pairs * D)  # q_i . (k_j + r_ij) and sum_j a_ij (v_j + r_ij)
        + linear(B * N, D, 2 * D) + linear(B * N, 2 * D, D)
    )
    path_mean = pairs * P * D  # label-embedding sums
    head = linear(B, 2 * D, D) * 2 + linear(B, D, 2)  # graph projection, gate, classifier
    return {
        "text encoder": LAYERS * text_layer,
        "graph encoder (2 graphs)": 2 * (LAYERS * graph_layer + path_mean),
        "  of which relation-path projections": 2 * LAYERS * 2 * linear(pairs, D, D),
        "gate and classifier": head,
    }


def median_seconds(criterion_dir, name):
    path = os.path.join(criterion_dir, "slm", name, "new", "estimates.json")
    try:
        with open(path) as f:
            return json.load(f)["median"]["point_estimate"] / 1e9
    except OSError:
        return None


def main():
    criterion_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "target", "criterion")
    parts = forward_flops()
    forward = sum(v for k, v in parts.items() if not k.startswith("  "))
    for k, v in parts.items():
        print(f"{k:40s} {v / 1e6:10.1f} MFLOP")
    print(f"{'forward total':40s} {forward / 1e6:10.1f} MFLOP; training step ~{3 * forward / 1e9:.2f} GFLOP")
    peak = sgemm_peak()
    print(f"numpy/OpenBLAS sgemm peak ({os.cpu_count()} cores): {peak / 1e9:.1f} GFLOP/s")
    for name, flops in (("train_step_b16", 3 * forward), ("inference_b16", forward)):
        t = median_seconds(criterion_dir, name)
        if t is None:
            print(f"{name}: no criterion result under {criterion_dir}")
            continue
        print(f"{name}: {t * 1e3:.1f} ms -> {flops / t / 1e9:.1f} GFLOP/s = {100 * flops / t / peak:.1f}% of the sgemm peak")


if __name__ == "__main__":
    main()
