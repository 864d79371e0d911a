"""`proctor export` as a user meets it: one line per written folder, bad input `path: what is wrong`, exit 2."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from proctor.cli import main
from proctor.log.runlog import SAMPLES, Manifest, Outcome, Sample, write_manifest, write_results
from proctor.metrics.results import summarize


@pytest.fixture
def run(tmp_path: Path) -> Path:
    d = tmp_path / "run"
    d.mkdir()
    samples = [Sample(sample_id=f"q{i}#0", item_id=f"q{i}", dataset="tiny", reference="A", extracted="A",
                      raw_output="A", score=float(i % 2), outcome=Outcome.CORRECT if i % 2 else Outcome.WRONG)
               for i in range(4)]
    write_manifest(d, Manifest(run_id="r", proctor_version="0.3.0", dataset={"name": "tiny"},
                               model={"spec": "openai:m"}, mode="generate", started_at="2026-01-01T00:00:00+00:00"))
    (d / SAMPLES).write_text("".join(s.model_dump_json() + "\n" for s in samples))
    write_results(d, summarize(samples))
    return d


def test_export_says_what_it_wrote(run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "llmwc"
    assert main(["export", str(run), "--to", "llmwc", "-o", str(out)]) == 0
    assert capsys.readouterr().out.strip() == f"wrote 3 llmwc files to {out}"
    assert json.loads((out / "models" / "m" / "summary.json").read_text())["accuracy"] == 0.5


@pytest.mark.parametrize(("argv", "message"), [
    (["--to", "html"], "--to: 'html': not a format (proctor exports to llmwc, probsem, inspect, eee)"),
    (["--to", "probsem"], "not a suite run"),
])
def test_bad_input_is_one_line_and_exit_2(run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                          argv: list[str], message: str) -> None:
    out = tmp_path / "out"
    assert main(["export", str(run), *argv, "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and not out.exists()


def test_not_a_run_and_a_used_folder_are_refused(run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["export", str(tmp_path / "nope"), "--to", "llmwc", "-o", str(tmp_path / "out")]) == 2
    assert f"{tmp_path / 'nope'}: not a run directory (no manifest.json)" in capsys.readouterr().err
    used = tmp_path / "used"
    used.mkdir()
    (used / "run.json").write_text("mine")
    assert main(["export", str(run), "--to", "llmwc", "-o", str(used)]) == 2
    assert f"{used / 'run.json'}: exists: export adds files to a folder, never replaces one" in capsys.readouterr().err
    assert [p.name for p in used.iterdir()] == ["run.json"] and (used / "run.json").read_text() == "mine"
    afile = tmp_path / "afile"
    afile.write_text("x")
    assert main(["export", str(run), "--to", "llmwc", "-o", str(afile)]) == 2
    assert f"{afile}: exists and is not a folder" in capsys.readouterr().err


def test_a_run_that_did_not_finish_is_refused(run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (run / "results.json").unlink()
    assert main(["export", str(run), "--to", "llmwc", "-o", str(tmp_path / "out")]) == 2
    assert "no results.json: the run did not finish" in capsys.readouterr().err


_SLOW_EXPORT = """
import sys, time
import proctor.interop.llmwc_export as llmwc
from proctor.cli import main

def slow(logs, out):
    (out / "partial.json").write_text("{}")
    time.sleep(60)

llmwc.export = slow
sys.exit(main(sys.argv[1:]))
"""


def _export_until_staged(run: Path, out: Path) -> tuple[object, Path]:
    import os
    import subprocess
    import sys
    import time

    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[2] / "src")}
    child = subprocess.Popen([sys.executable, "-c", _SLOW_EXPORT, "export", str(run), "--to", "llmwc", "-o", str(out)],
                             env=env, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        staged = list(out.parent.glob(f".{out.name}.*/partial.json"))
        if staged:
            return child, staged[0].parent
        time.sleep(0.05)
    child.kill()
    raise AssertionError("the export never started writing")


@pytest.mark.parametrize("sig", ["SIGTERM", "SIGKILL"])
def test_a_killed_export_leaves_no_staging_folder_for_ever(run: Path, tmp_path: Path, sig: str) -> None:
    """Issue 32 #9: SIGTERM during export cleans up as ctrl-C does; after SIGKILL (nothing can clean up) the next
    export to the same folder removes the staging folder the dead writer left, and succeeds."""
    import signal
    import subprocess

    out = tmp_path / "llmwc"
    child, staging = _export_until_staged(run, out)
    assert isinstance(child, subprocess.Popen)
    child.send_signal(getattr(signal, sig))
    code = child.wait(timeout=30)
    if sig == "SIGTERM":
        assert code == 130 and not staging.exists(), child.stderr.read() if child.stderr else ""
    else:
        assert staging.exists()
    assert not out.exists()
    assert main(["export", str(run), "--to", "llmwc", "-o", str(out)]) == 0
    assert not staging.exists() and not [p for p in tmp_path.iterdir() if p.name.startswith(".llmwc.")]


def test_one_file_written_is_said_in_the_singular(run: Path, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """#32.32: "wrote 1 inspect file", not "1 inspect files"."""
    pytest.importorskip("inspect_ai")
    out = tmp_path / "one"
    assert main(["export", str(run), "--to", "inspect", "-o", str(out)]) == 0
    assert capsys.readouterr().out.strip() == f"wrote 1 inspect file to {out}"


def _tree(root: Path) -> dict[str, str]:
    """Each file's text, the folder it names (run.json's `output_dir`) masked."""
    return {str(p.relative_to(root)): re.sub(r'"output_dir": "[^"]*"', '"output_dir": OUT', p.read_text())
            for p in root.rglob("*") if p.is_file()}


def test_exports_requested_with_the_run_are_the_pipelines_outputs(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """`run --export FORMAT:DIR` and `proctor.eval(outputs=[Export(...)])` write, once the run is done, what
    `proctor export` writes from its run directory: the same files, byte for byte but the folder they name."""
    import proctor
    from proctor.interop.exporters import Export

    data, runs = str(Path("examples/items/multiple-choice.jsonl").resolve()), tmp_path / "runs"
    assert main(["run", data, "--model", "scripted:first", "--runs-root", str(runs), "--no-history",
                 "--no-progress", "--export", f"llmwc:{tmp_path / 'cli'}"]) == 0
    assert f"llmwc export: 3 files → {tmp_path / 'cli'}" in capsys.readouterr().out
    log = proctor.eval(data, "scripted:first", runs_root=runs, record_history=False,
                       outputs=[Export("llmwc", tmp_path / "py")])  # the same run, resumed: nothing is asked
    assert [p.parent for p in runs.iterdir()] == [runs] and len(list(runs.iterdir())) == 1
    assert main(["export", str(log.path), "--to", "llmwc", "-o", str(tmp_path / "cmd")]) == 0
    cli, py, cmd = (_tree(tmp_path / d) for d in ("cli", "py", "cmd"))
    assert cli == py == cmd and len(cli) == 3 and "models/first/results.json" in cli


@pytest.mark.parametrize(("flags", "message"), [
    (["--export", "nope:x"], "--export: 'nope': not a format (proctor exports to llmwc, probsem, inspect, eee)"),
    (["--export", "inspect"], "--export 'inspect': give FORMAT:DIR"),
    (["--export", "llmwc:x", "--dry-run"], "--export: not with --dry-run, --shards or --executor"),
])
def test_a_bad_export_is_refused_before_the_run(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                flags: list[str], message: str) -> None:
    code = main(["run", "examples/items/multiple-choice.jsonl", "--model", "scripted:first", "--runs-root",
                 str(tmp_path / "runs"), "--no-history", *flags])
    assert code == 2 and message in capsys.readouterr().err and not (tmp_path / "runs").exists()


def test_llmwc_run_json_names_the_folder_written_not_its_staging_folder(run: Path, tmp_path: Path) -> None:
    """run.json's `output_dir` is the `-o` folder, never the hidden staging folder the export was written through."""
    out = tmp_path / "llmwc"
    assert main(["export", str(run), "--to", "llmwc", "-o", str(out)]) == 0
    assert json.loads((out / "run.json").read_text())["benchmark"]["output_dir"] == str(out)
