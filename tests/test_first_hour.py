"""docs/first-hour.md is true: its commands run in order, from a scratch copy of `examples/`, and print what
the page shows.

Every ```console block of the page is a transcript: `$ COMMAND` lines, each followed by what it prints
(stdout and stderr as they interleave, as a terminal shows them; the page's tables are rich tables as printed
when piped). Outputs are compared line by line after `normalize`: run ids, timestamps, durations and the
scratch directory's path stand for themselves, trailing blanks go, and a line `…` on the page stands for any
number of lines. A command's exit status must be the one its `# exit N` comment says (0 when none).
```text blocks (what `make demo` ends with) are shown, not run. Run this file as a script to print the
transcript as the program prints it now (to paste into the page after a deliberate change).
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import stat
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "first-hour.md"
WILDCARD = "…"


@dataclass(frozen=True)
class Step:
    command: str
    expected: list[str]
    exit_code: int


def page_steps(text: str) -> list[Step]:
    """The `$ ` commands of every ```console block, each with the lines shown after it and its exit status."""
    steps: list[Step] = []
    for block in re.findall(r"```console\n(.*?)```", text, re.DOTALL):
        for chunk in re.split(r"^(?=\$ )", block, flags=re.MULTILINE):
            if not chunk.startswith("$ "):
                continue
            first, *rest = chunk.rstrip("\n").split("\n")
            command, _, comment = first[2:].partition("  #")
            code = re.search(r"exit (\d+)", comment)
            while rest and not rest[-1].strip():
                rest.pop()
            steps.append(Step(command.strip(), rest, int(code.group(1)) if code else 0))
    return steps


def normalize(text: str, sandbox: Path | None = None) -> list[str]:
    """Lines with what differs from run to run replaced by a stand-in of the same width (tables keep their shape)."""
    if sandbox is not None:
        text = text.replace(str(sandbox) + os.sep, "").replace(str(sandbox), ".")
    text = re.sub(r"\b\d{4}-\d\d-\d\d[ T]\d\d:\d\d(:\d\d(\.\d+)?)?([+-]\d\d:\d\d|Z)?", lambda m: "T" * len(m[0]), text)
    text = re.sub(r"\b[0-9a-f]{12}\b", "<run id....>", text)
    text = re.sub(r"\b\d+(\.\d+)? ?(s|ms|min)\b", lambda m: "D" * len(m[0]), text)
    return [line.rstrip() for line in text.splitlines()]


def matches(expected: list[str], actual: list[str]) -> bool:
    """`actual` equals `expected`, where a `…` line in `expected` stands for any number of lines."""
    if not expected:
        return not actual
    if expected[0] == WILDCARD:
        return any(matches(expected[1:], actual[i:]) for i in range(len(actual) + 1))
    return bool(actual) and expected[0] == actual[0] and matches(expected[1:], actual[1:])


def make_sandbox(where: Path) -> Path:
    """A scratch working directory holding a copy of `examples/`, with a `proctor` executable on PATH."""
    shutil.copytree(ROOT / "examples", where / "examples")
    bin_dir = where / "bin"
    bin_dir.mkdir()
    shim = bin_dir / "proctor"
    shim.write_text(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} -m proctor "$@"\n', encoding="utf-8")
    shim.chmod(shim.stat().st_mode | stat.S_IEXEC)
    return where


def run_step(step: Step, sandbox: Path) -> tuple[int, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES", "FORCE_COLOR", "PROCTOR_STORE")}
    env.update({
        "PATH": f"{sandbox / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}",
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT / "src"), os.environ.get("PYTHONPATH")])),
        "PROCTOR_STORE": str(sandbox / "store.sqlite"), "PYTHONUNBUFFERED": "1", "HF_HUB_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1", "OMP_NUM_THREADS": "1", "NO_COLOR": "1", "TERM": "dumb",
    })
    res = subprocess.run(["bash", "-c", step.command], cwd=sandbox, env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True, timeout=300, check=False)
    return res.returncode, res.stdout


def test_the_page_is_parsed() -> None:
    steps = page_steps(PAGE.read_text(encoding="utf-8"))
    assert len(steps) >= 14 and all(s.command.startswith("proctor ") for s in steps)
    assert any(s.exit_code == 2 for s in steps) and any(s.exit_code == 1 for s in steps)
    assert matches(["a", WILDCARD, "d"], ["a", "b", "c", "d"]) and not matches(["a", "d"], ["a", "b", "d"])
    files = set(re.findall(r"examples/[\w./-]+", PAGE.read_text(encoding="utf-8")))
    assert files and all((ROOT / f.rstrip(".")).exists() for f in files), files  # only shipped files


@pytest.mark.long
def test_every_command_of_the_first_hour_prints_what_the_page_shows(tmp_path: Path) -> None:
    sandbox = make_sandbox(tmp_path)
    for step in page_steps(PAGE.read_text(encoding="utf-8")):
        code, out = run_step(step, sandbox)
        actual = normalize(out, sandbox)
        assert "Traceback" not in out, f"$ {step.command}\n{out}"
        assert code == step.exit_code, f"$ {step.command}\nexit {code}, the page says {step.exit_code}\n{out}"
        assert matches(normalize("\n".join(step.expected)), actual), (
            f"$ {step.command}\n--- the page\n" + "\n".join(step.expected) + "\n--- the program\n" + "\n".join(actual))


def test_the_benchmark_file_shown_is_the_shipped_one() -> None:
    """#41.22: the page's capitals YAML had drifted from examples/benchmarks/capitals.yaml (no `cluster:`, which
    the text below it explains)."""
    shown = re.findall(r"```yaml\n(.*?)```", PAGE.read_text(encoding="utf-8"), re.DOTALL)
    assert shown == [(ROOT / "examples" / "benchmarks" / "capitals.yaml").read_text(encoding="utf-8")]


if __name__ == "__main__":  # print the transcript as it is now
    import tempfile

    with tempfile.TemporaryDirectory() as scratch:
        box = make_sandbox(Path(scratch))
        for s in page_steps(PAGE.read_text(encoding="utf-8")):
            status, output = run_step(s, box)
            note = f"  # exit {status}" if status else ""
            print(f"$ {s.command}{note}\n" + output.replace(str(box) + os.sep, "").rstrip() + "\n")
