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
