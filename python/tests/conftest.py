"""Where the golden vectors are: ../shared beside the repository (DIALEVAL_SHARED overrides).
Without them the parity tests skip, unless DIALEVAL_REQUIRE_SHARED=1 (set by .ci/run)."""

import json
import math
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def shared_dir():
    d = Path(os.environ.get("DIALEVAL_SHARED", ROOT.parent / "shared"))
    if (d / "golden").is_dir():
        return d
    if os.environ.get("DIALEVAL_REQUIRE_SHARED") == "1":
        raise RuntimeError(f"{d}/golden is missing and DIALEVAL_REQUIRE_SHARED=1")
    pytest.skip(f"no golden vectors at {d}")


def number(v):
    """A golden float: the strings NaN, Infinity, -Infinity stand for the non-finite ones."""
    if isinstance(v, str):
        return {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}[v]
    return float(v)


def read_json(path):
    return json.loads(Path(path).read_text())


def read_jsonl(path):
    return [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]
