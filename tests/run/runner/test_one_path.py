"""`proctor run --mode logprob` and `proctor score` are one path: same text, same log-probs, same numbers;
suites get the cache and resume; the cache keys on the model's declared identity, not its URL."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from score_out import the_run_dir  # tests/ is on sys.path (tests/conftest.py's directory)

import proctor
from proctor.cli import main
from proctor.log.runlog import Outcome, Sample

FIXTURES = Path(__file__).parents[2] / "fixtures" / "suites"


def _by_item(run: Path) -> dict[str, Sample]:
    return {s.item_id: s for s in proctor.read_run(run).samples}


def _multi_prompt_dir(tmp_path: Path) -> Path:
    """The seed's suites under two prompts: a multi-suite, multi-prompt directory."""
    d = tmp_path / "suites"
    shutil.copytree(FIXTURES, d)
    (d / "other.txt").write_text("Another instruction, then the passage.\n")
    for t in ("A", "B"):
        shutil.copy(d / f"test_{t}.json", d / f"other_{t}.json")
    return d


@pytest.mark.parametrize("multi", [False, True], ids=["seed-suites", "multi-prompt-dir"])
def test_run_and_score_give_identical_numbers(tiny_model_dir: Path, tmp_path: Path, multi: bool) -> None:
    data = _multi_prompt_dir(tmp_path) if multi else FIXTURES
    store = str(tmp_path / "store.sqlite")
    model = f"hf:{tiny_model_dir}"
    assert main(["score", str(data), "--model", model, "-o", str(tmp_path / "s"), "--no-cache", "--store", store,
                 "--no-progress"]) == 0
    assert main(["run", str(data), "--mode", "logprob", "--model", model, "-o", str(tmp_path / "r"), "--no-cache",
                 "--store", store, "--no-progress"]) == 0
    s_dir = the_run_dir(tmp_path / "s")
    scored, ran = _by_item(s_dir), _by_item(tmp_path / "r")
    assert scored.keys() == ran.keys() and len(scored) == (6 if multi else 3)
    for item_id, s in scored.items():
        r = ran[item_id]
        assert s.prompt == r.prompt, item_id
        assert (s.outcome, s.extracted, s.score) == (r.outcome, r.extracted, r.score)
        assert s.details["logprobs"] == pytest.approx(r.details["logprobs"], abs=1e-6)
        assert s.details["distribution"] == pytest.approx(r.details["distribution"], abs=1e-6)
    s_res, r_res = proctor.read_run(s_dir).results, proctor.read_run(tmp_path / "r").results
    assert s_res is not None and r_res is not None
    for key in ("n", "n_scored", "n_unscored", "accuracy", "ci_low", "ci_high"):
        assert getattr(s_res.overall, key) == getattr(r_res.overall, key), key
    assert s_res.calibration == r_res.calibration


def test_score_text_is_probsems(tiny_model_dir: Path, tmp_path: Path) -> None:
    """PROMPT\\nPRE\\nCTX\\nPOST\\n + query: pretext and posttext are kept on both commands."""
    suite = json.loads((FIXTURES / "test_A.json").read_text())
    prompt = (FIXTURES / "test.txt").read_text()
    assert main(["run", str(FIXTURES), "--mode", "logprob", "--model", f"hf:{tiny_model_dir}", "-o",
                 str(tmp_path / "r"), "--no-cache", "--no-progress", "--store", str(tmp_path / "st")]) == 0
    sample = _by_item(tmp_path / "r")["test.A.0"]
    parts = [p for p in (prompt, suite["pretext"], suite["context"][0]["text"], suite["posttext"]) if p]
    assert sample.prompt == "\n".join(parts) + "\n"


def test_all_unscored_suite_counts_nothing(tiny_model_dir: Path, tmp_path: Path) -> None:
    """Contexts with expected -1 are unscored: excluded from accuracy, n and CIs, shown with a distribution."""
    d = tmp_path / "u"
    shutil.copytree(FIXTURES, d)
    for f in d.glob("test_*.json"):
        suite = json.loads(f.read_text())
        for c in suite["context"]:
            c["expected"] = -1
        f.write_text(json.dumps(suite))
    for mode in ("logprob", "generate"):
        out = tmp_path / mode
        args = ["run", str(d), "--mode", mode, "--model", f"hf:{tiny_model_dir}", "-o", str(out), "--no-cache",
                "--no-progress", "--store", str(tmp_path / "st"),
                *(["--max-tokens", "4"] if mode == "generate" else [])]  # log-likelihood refuses sampling settings
        assert main(args) == 0, mode
        log = proctor.read_run(out)
        assert log.results is not None
        overall = log.results.overall
        assert overall.n_scored == 0 and overall.n_unscored == 3 and overall.accuracy is None, mode
        assert overall.ci_low is None and overall.ci_high is None
        assert all(s.outcome is Outcome.UNSCORED and s.score is None for s in log.samples)
    assert all("distribution" in s.details for s in proctor.read_run(tmp_path / "logprob").samples)
