"""#47 case 3: a log-likelihood run's default prompt kind is resolved and recorded, so the default and the same kind
named are one run (one id, one label, comparable); run directories written before, with the kind unnamed
(main ee87dc3's own code: tests/fixtures/kind_legacy), are still found and resumed under their own ids."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from proctor.cli import main
from proctor.log.setting import run_setting, setting_label
from proctor.metrics.results import read_run

FIXTURE = Path(__file__).parents[2] / "fixtures" / "kind_legacy"
CAPITALS = Path(__file__).parents[2] / "fixtures" / "fewshot_legacy" / "data" / "capitals.yaml"  # three_shot first
ITEMS = FIXTURE / "data" / "multiple-choice.jsonl"  # item data: zero_shot first
QUIET = ["--no-history", "--no-cache", "--no-progress"]
CASES = {"capitals": ([str(CAPITALS)], "three_shot"), "multiple-choice": ([str(ITEMS), "--mode", "logprob"], "zero_shot")}
LEGACY_IDS = {"capitals": "361448fb53c3", "multiple-choice": "d4500091bd29"}  # the kind unnamed, at ee87dc3
NAMED_IDS = {"capitals": "1128ecfe65f8", "multiple-choice": "7dc591f06a4d"}  # the kind named, at ee87dc3


def _run(name: str, *extra: str) -> int:
    args, _ = CASES[name]
    return main(["run", *args, "--model", "scripted:random", *extra, *QUIET])


@pytest.mark.parametrize("name", list(CASES))
def test_the_default_kind_and_the_same_kind_named_are_one_run(name: str, tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    _, kind = CASES[name]
    assert _run(name, "-o", str(tmp_path / "default")) in (0, 1)
    assert _run(name, "--prompt", kind, "-o", str(tmp_path / "named")) in (0, 1)
    default, named = (read_run(tmp_path / d).manifest for d in ("default", "named"))
    assert default.run_id == named.run_id == NAMED_IDS[name]  # ee87dc3: the default had another id
    assert default.spec is not None and default.spec.scorer.prompt_kind == kind
    assert setting_label(run_setting(default)) == setting_label(run_setting(named)) == f"logprob · {kind}"
    capsys.readouterr()
    assert main(["compare", str(tmp_path / "default"), str(tmp_path / "named")]) == 0  # not "different settings"
    assert "different settings" not in capsys.readouterr().err


@pytest.mark.parametrize("name", list(CASES))
def test_named_after_default_resumes_the_same_directory(name: str, tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    _, kind = CASES[name]
    assert _run(name, "--runs-root", str(tmp_path)) in (0, 1)
    capsys.readouterr()
    assert _run(name, "--prompt", kind, "--runs-root", str(tmp_path)) in (0, 1)
    assert "0 to ask" in capsys.readouterr().err
    assert len(list(tmp_path.iterdir())) == 1


def _legacy_copy(tmp_path: Path, name: str) -> Path:
    shutil.copytree(FIXTURE / "runs", tmp_path / "runs")
    (run,) = (tmp_path / "runs").glob(f"{name}__*__{LEGACY_IDS[name]}")
    return run


@pytest.mark.parametrize("named", [False, True])
@pytest.mark.parametrize("name", list(CASES))
def test_a_run_recorded_with_its_kind_unnamed_resumes_under_its_own_id(name: str, named: bool, tmp_path: Path,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    run = _legacy_copy(tmp_path, name)
    assert json.loads((run / "manifest.json").read_text())["spec"]["scorer"]["prompt_kind"] is None
    lines = (run / "samples.jsonl").read_text().splitlines(keepends=True)
    (run / "samples.jsonl").write_text("".join(lines[: len(lines) // 2]))
    (run / "results.json").unlink()
    kind = ["--prompt", CASES[name][1]] if named else []
    capsys.readouterr()
    assert _run(name, *kind, "--runs-root", str(tmp_path / "runs")) in (0, 1)
    assert f"resuming {run}: {len(lines) // 2}/{len(lines)} done" in capsys.readouterr().err
    log = read_run(run)
    assert log.manifest.run_id == LEGACY_IDS[name] and len(log.samples) == len(lines)
    assert sorted(p.name for p in (tmp_path / "runs").iterdir()) == sorted(p.name for p in (FIXTURE / "runs").iterdir())
    # and again: the manifest now names the kind, under the old id
    assert log.manifest.spec is not None and log.manifest.spec.scorer.prompt_kind == CASES[name][1]
    assert _run(name, *kind, "--runs-root", str(tmp_path / "runs")) in (0, 1)
    assert f"resuming {run}: {len(lines)}/{len(lines)} done, 0 to ask" in capsys.readouterr().err
    assert read_run(run).manifest.run_id == LEGACY_IDS[name]


def test_a_legacy_run_given_with_o_resumes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = _legacy_copy(tmp_path, "capitals")
    capsys.readouterr()
    assert _run("capitals", "-o", str(run)) in (0, 1)
    assert f"resuming {run}: 8/8 done, 0 to ask" in capsys.readouterr().err
    assert read_run(run).manifest.run_id == LEGACY_IDS["capitals"]


def test_another_kind_named_is_not_the_legacy_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The unnamed kind was the default one: zero_shot named is another run, asked afresh in its own directory."""
    run = _legacy_copy(tmp_path, "capitals")
    capsys.readouterr()
    assert _run("capitals", "--prompt", "zero_shot", "--runs-root", str(tmp_path / "runs")) in (0, 1)
    assert "resuming" not in capsys.readouterr().err
    (new,) = [p for p in (tmp_path / "runs").glob("capitals__*") if p != run]
    assert read_run(new).manifest.spec.scorer.prompt_kind == "zero_shot"  # type: ignore[union-attr]
    assert (run / "manifest.json").read_bytes() == (FIXTURE / "runs" / run.name / "manifest.json").read_bytes()
