"""Item 10 of issue 13: suite validation is linear — 20k contexts, every one wrong, are located quickly."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from proctor.data.formats.suites import read_suite
from proctor.util.errors import InputError


def test_twenty_thousand_bad_contexts_are_located_in_linear_time(tmp_path: Path) -> None:
    n = 20_000
    suite = {"queries": ["a", "b"], "context": [{"text": f"c{i}", "expected": 5} for i in range(n)]}
    path = tmp_path / "p_A.json"
    path.write_text(json.dumps(suite, indent=1))
    t0 = time.perf_counter()
    with pytest.raises(InputError) as e:
        read_suite(path, "p")
    assert time.perf_counter() - t0 < 15  # was 105 s (quadratic); about 1 s here
    problems = e.value.problems
    assert len(problems) == n
    lines = path.read_text().splitlines()
    for p in (problems[0], problems[n // 2], problems[-1]):
        assert p.line is not None and '"expected": 5' in lines[p.line - 1]
