"""At 80 columns, on a real terminal (a pseudo-terminal of 80 columns), no name, id or number is cut."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import struct
import subprocess
import sys
import termios
from pathlib import Path

from proctor.benchmarks.registry import benchmark_names

ROOT = Path(__file__).resolve().parents[2]
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def at_80_columns(*args: str, cwd: Path) -> str:
    """What `proctor ARGS` shows on an 80-column terminal (escape sequences removed)."""
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 80, 0, 0))
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT / "src"), env.get("PYTHONPATH")]))
    proc = subprocess.Popen([sys.executable, "-m", "proctor", *args], stdin=follower, stdout=follower,
                            stderr=subprocess.DEVNULL, cwd=cwd, env=env, close_fds=True)
    os.close(follower)
    chunks = []
    while True:
        try:
            data = os.read(leader, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    proc.wait(timeout=120)
    os.close(leader)
    return ANSI.sub("", b"".join(chunks).decode("utf-8", "replace")).replace("\r", "")


def test_datasets_shows_every_name_whole(tmp_path: Path) -> None:
    shown = at_80_columns("datasets", cwd=tmp_path)
    assert "…" not in shown
    rows = {line.split()[0] for line in shown.splitlines() if line.strip()}
    assert set(benchmark_names()) <= rows, set(benchmark_names()) - rows
    assert max(len(line) for line in shown.splitlines()) <= 80


def test_score_shows_every_interval_whole(tmp_path: Path) -> None:
    suites = sorted((ROOT / "examples" / "suites").iterdir())
    shown = at_80_columns("score", *map(str, suites), "--model", "scripted:first", "-o", str(tmp_path / "out"),
                          cwd=tmp_path)
    assert "…" not in shown
    assert re.search(r"test_A +2 +2 +0 +0\.000 \[0\.000, 0\.\d{3}\] +\d\.\d{3} +\d\.\d{3} +\d\.\d{3}", shown), shown


def _two_runs(where: Path) -> list[str]:
    """Two recorded runs on the bundled MMLU-Pro rows, in a store of their own: (run dirs…, --store, path)."""
    from proctor.cli import main

    store = str(where / "s.sqlite")
    for rule in ("first", "random"):
        assert main(["run", "mmlu-pro", "--data-file", str(ROOT / "examples" / "upstream" / "mmlu_pro"),
                     "--model", f"scripted:{rule}", "-o", str(where / rule), "--store", store]) == 0
    return [str(where / "first"), str(where / "random"), "--store", store]


def _whole_at_80(shown: str) -> None:
    assert "…" not in shown, shown
    assert max(len(line) for line in shown.splitlines()) <= 80, shown


def test_compare_shows_every_number_whole(tmp_path: Path) -> None:
    first, random, *store = _two_runs(tmp_path)
    shown = at_80_columns("compare", first, random, *store, cwd=tmp_path)
    _whole_at_80(shown)
    # the overall row and a category row: every count, percentage, difference, interval and p whole on one line
    assert re.search(r"overall +7 +42\.9 +14\.3 +\+28\.6 +\[-\d+\.\d, \+\d+\.\d\] +1 +3 +0\.625 +0\.625 +– *$",
                     shown, re.MULTILINE), shown
    assert re.search(r"^ *math +3 +33\.3 +0\.0 +\+33\.3 +\[-\d+\.\d, \+\d+\.\d\]", shown, re.MULTILINE), shown


def test_a_family_of_comparisons_keeps_names_ids_and_numbers_whole(tmp_path: Path) -> None:
    first, random, *store = _two_runs(tmp_path)
    shown = at_80_columns("compare", first, random, first, "--mix-settings", *store, cwd=tmp_path)
    _whole_at_80(shown)
    ids = re.findall(r"\(([0-9a-f]{8})\)", shown)
    assert len(ids) == 6, shown  # each pair's two run ids, whole
    assert shown.count("scripted:first") >= 4 and "scripted:random" in shown
    assert re.search(r"\+28\.6\b.*\[-\d+\.\d, \+\d+\.\d\]", shown), shown
    assert "adj. p 1.000" in shown or re.search(r"0\.625 +1\.000", shown), shown


def test_runs_of_one_dataset_fit_80_columns(tmp_path: Path) -> None:
    store = _two_runs(tmp_path)[2:]
    for shown in (at_80_columns("runs", "-d", "mmlu-pro", *store, cwd=tmp_path),
                  subprocess.run([sys.executable, "-m", "proctor", "runs", "-d", "mmlu-pro", *store],
                                 capture_output=True, text=True, cwd=tmp_path, check=True,
                                 env={**os.environ, "COLUMNS": "80", "PYTHONPATH": str(ROOT / "src")}).stdout):
        _whole_at_80(shown)
        assert len(re.findall(r"^[0-9a-f]{12}\b", shown, re.MULTILINE)) == 2, shown  # each run id whole
        assert "tiger-lab-mmlu-pro" in shown and re.search(r"42\.9%? \[15\.8, 75\.0\]", shown), shown


def test_history_and_leaderboard_keep_every_number_whole(tmp_path: Path) -> None:
    """At 80 columns `history --by category` gave its `overall %` column no width at all (the number vanished) and
    cut category names; the leaderboard broke its start times over two lines."""
    store = _two_runs(tmp_path)[2:]
    for args in (["history", "--model", "scripted:first", "--dataset", "mmlu-pro"],
                 ["history", "--model", "scripted:first", "--dataset", "mmlu-pro", "--by", "category"]):
        shown = at_80_columns(*args, *store, cwd=tmp_path)
        _whole_at_80(shown)
        assert re.search(r"overall % 42\.9\b", shown) and re.search(r"^[\w ]*\b[0-9a-f]{12}\b", shown, re.MULTILINE), shown
        assert "[15.8, 75.0]" in shown or "computer science % 50.0" in shown, shown
    shown = at_80_columns("leaderboard", "mmlu-pro", *store, cwd=tmp_path)
    _whole_at_80(shown)
    assert re.search(r"1 scripted:first +42\.9 \[15\.8, 75\.0\] [0-9a-f]{12} \d{4}-\d\d-\d\d \d\d:\d\d", shown), shown
