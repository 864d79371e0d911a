"""Fixtures of the execution tests: bubblewraps that fail."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from proctor.scoring.execute.sandbox import Bubblewrap, python_for_sandbox

FAKE_BWRAP = """
# a bubblewrap whose own set-up fails after it started the sandbox (it reports the child, never its exit)
import os, sys
os.write(int(sys.argv[sys.argv.index("--json-status-fd") + 1]), b'{"child-pid": %d}\\n' % os.getpid())
sys.exit("bwrap: Can't mount tmpfs on /newroot/dev/shm: No space left on device")
"""


@contextmanager
def scripted_bwrap(script: str) -> Iterator[Bubblewrap]:
    """A Python script as bubblewrap, where any user id can run it (as root an execution runs as its own)."""
    with tempfile.TemporaryDirectory(prefix="proctor-fake-bwrap-") as tmp:
        os.chmod(tmp, 0o755)
        path = Path(tmp) / "bwrap"
        path.write_text(f"#!{python_for_sandbox()}{script}")
        path.chmod(0o755)
        yield Bubblewrap(str(path))


@pytest.fixture
def fake_bwrap() -> Iterator[Bubblewrap]:
    with scripted_bwrap(FAKE_BWRAP) as box:
        yield box


HANGING_BWRAP = """
# a bubblewrap stuck in its own set-up: it never starts the sandbox
import time
time.sleep(60)
"""


@pytest.fixture
def hanging_bwrap() -> Iterator[Bubblewrap]:
    with scripted_bwrap(HANGING_BWRAP) as box:
        yield box
