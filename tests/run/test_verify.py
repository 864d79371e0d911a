"""`proctor verify`: a fresh run verifies; an edited sample is found at its line even when results.json was edited
to agree; results that disagree with their samples, changed data, a missing checksums file and signatures (Ed25519
through the `cryptography` package, the signer's key checked) are each found."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from proctor.cli import main
from proctor.log.checksums import write_checksums
from proctor.log.runlog import RunLog, read_manifest, write_results
from proctor.metrics.results import latest_samples
from proctor.run.finalize import results_of
from proctor.run.verify import verify_run


def _run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    rows = [{"identifier": f"q{i}", "modality": "choiceof2", "prompt": f"Question {i}?", "response": "AB"[i % 2],
             "choices": {"A": "yes", "B": "no"}, "category": f"c{i % 3}"} for i in range(12)]
    items = tmp_path / "items.jsonl"
    items.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    out = tmp_path / "run"
    assert main(["run", str(items), "--model", "scripted:first", "-o", str(out), "--no-progress", "--no-history",
                 "--no-cache"]) == 0
    capsys.readouterr()
    return out


def _verify(run: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, list[str]]:
    code = main(["verify", str(run), *extra])
    return code, capsys.readouterr().out.splitlines()


def _edit_sample(run: Path, line: int) -> None:
    """Turn the wrong answer on `line` of samples.jsonl into a right one, as a hand edit would."""
    path = run / "samples.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    record = json.loads(lines[line - 1])
    assert record["outcome"] == "wrong"
    record.update(score=1.0, outcome="correct", extracted=record["reference"])
    lines[line - 1] = json.dumps(record) + "\n"
    path.write_text("".join(lines), encoding="utf-8")


def _rewrite_results(run: Path) -> None:
    """results.json recomputed from the (edited) samples: the edit made consistent."""
    log = RunLog(path=run, manifest=read_manifest(run), samples=latest_samples(run))
    write_results(run, results_of(log))


def test_a_fresh_run_verifies(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = _run(tmp_path, capsys)
    assert (run / "checksums.json").is_file()
    code, out = _verify(run, capsys)
    assert code == 0 and out[-1] == f"verified: {run}"
    assert any(line.startswith("ok: samples.jsonl: sha256") for line in out)
    assert any(line.startswith("ok: data: ") and "items.jsonl content hash sha256:" in line for line in out)
    assert any("every number recomputed from 12 samples agrees" in line for line in out)


def test_a_consistently_edited_sample_is_found_at_its_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = _run(tmp_path, capsys)
    _edit_sample(run, 2)  # q1's answer is B; scripted:first said A
    _rewrite_results(run)
    got = verify_run(run)
    assert not got.ok
    assert got.problems[0] == "samples.jsonl:2: differs from the line checksums.json recorded"
    assert got.problems[1].startswith("results.json:")  # its bytes changed too, though its numbers now agree
    assert not any("recomputed from samples.jsonl" in p for p in got.problems)
    code, out = _verify(run, capsys)
    assert code == 1 and out[0] == "differs: samples.jsonl:2: differs from the line checksums.json recorded"


def test_results_that_disagree_with_their_samples(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = _run(tmp_path, capsys)
    _edit_sample(run, 4)
    write_checksums(run)  # a forger who rewrote the checksums too, but not results.json
    got = verify_run(run)
    assert got.problems == [("results.json: overall.accuracy: 0.5 written, 0.5833333333333334 recomputed from "
                            "samples.jsonl")]


def test_changed_data_and_lines_added_or_missing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = _run(tmp_path, capsys)
    items = tmp_path / "items.jsonl"
    items.write_text(items.read_text(encoding="utf-8").replace("Question 3?", "Question three?"), encoding="utf-8")
    assert verify_run(run).problems == [
        f"data: {items} now has content hash {_hash(items)}; the run evaluated {read_manifest(run).dataset.content_hash}"]
    assert verify_run(run, check_data=False).ok
    samples = run / "samples.jsonl"
    samples.write_text("".join(samples.read_text(encoding="utf-8").splitlines(keepends=True)[:-1]), encoding="utf-8")
    assert verify_run(run, check_data=False).problems[0] == "samples.jsonl:12: is missing (11 lines now, 12 recorded)"


def _hash(items: Path) -> str:
    from proctor.benchmarks.registry import load_task

    return load_task(str(items)).content_hash


def test_missing_checksums_and_not_a_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = _run(tmp_path, capsys)
    (run / "checksums.json").unlink()
    code, out = _verify(run, capsys)
    assert code == 1 and out[0].startswith(f"differs: {run / 'checksums.json'}: missing")
    assert main(["verify", str(tmp_path)]) == 2
    assert "not a run directory" in capsys.readouterr().err


def test_signatures(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("cryptography")
    run = _run(tmp_path, capsys)
    key, other = tmp_path / "me.pem", tmp_path / "them.pem"
    assert main(["keygen", str(key)]) == 0 and main(["keygen", str(other)]) == 0
    assert oct((key.stat().st_mode) & 0o777) == "0o600"
    assert main(["keygen", str(key)]) == 2  # never overwritten
    assert main(["verify", str(run), "--public-key", f"{key}.pub"]) == 1  # unsigned, and a signer was asked for
    assert main(["sign", str(run), "--key", str(key)]) == 0
    capsys.readouterr()
    code, out = _verify(run, capsys, "--public-key", f"{key}.pub")
    assert code == 0 and any(line.startswith("ok: signature.json: signed by ed25519:") for line in out)
    code, out = _verify(run, capsys, "--public-key", f"{other}.pub")
    assert code == 1 and "not by the key given" in out[0]
    # a forger edits a sample, recomputes results.json and checksums.json: only the signature catches it
    _edit_sample(run, 2)
    _rewrite_results(run)
    write_checksums(run)
    got = verify_run(run, f"{key}.pub")
    assert got.problems == [("signature.json: does not match checksums.json (it changed after signing, or the "
                            "signature was edited)")]
    assert main(["sign", str(run), "--key", f"{key}.pub"]) == 2  # a public key cannot sign
    assert "not a PEM private key" in capsys.readouterr().err
