"""One evaluation, one spec, one run id, whatever the door (issue 30): the CLI, `proctor.eval` (plain and
inside a running event loop) and an llm-wc config; `--no-answer` in the run id; old run directories resumed;
a judge of its own endpoint."""

from __future__ import annotations

import asyncio
import hashlib
import json
import math
import shutil
from pathlib import Path
from typing import Any

import pytest
from nltk_punkt import punkt_dir

import proctor
from proctor.benchmarks import humaneval, mbpp
from proctor.benchmarks.registry import BUILTINS, load_task
from proctor.cli import main
from proctor.core.spec import RunSpec, ScorerSpec
from proctor.log.runlog import read_manifest
from proctor.metrics.results import read_run

ROOT = Path(__file__).resolve().parents[2]
UPSTREAM = ROOT / "tests" / "fixtures" / "upstream"
AIME = UPSTREAM / "aime_2025" / "train.jsonl"  # MathArena's hub schema: every MathArena competition reads it
DATA = {"mmlu-pro": UPSTREAM / "mmlu_pro", "aime-2025": AIME, "aime-2026": AIME, "hmmt-feb-2025": AIME,
        "hmmt-feb-2026": AIME, "math-500": UPSTREAM / "math_500" / "test.jsonl",
        **{f"gpqa-{s}": UPSTREAM / "gpqa" / f"gpqa_{s}.csv" for s in ("main", "diamond", "extended", "experts")},
        **{name: UPSTREAM / name / "test.jsonl" for name in ("humaneval", "mbpp", "livecodebench")},
        "ifeval": UPSTREAM / "ifeval" / "train.jsonl", "bbh": UPSTREAM / "bbh",
        "simpleqa-verified": UPSTREAM / "simpleqa_verified" / "eval.jsonl", "hle": UPSTREAM / "hle" / "test.jsonl"}
JUDGED = ("simpleqa-verified", "hle")  # graded by their own judge: a run needs one
OPEN_ANSWERS = ("aime-2025", "aime-2026", "hmmt-feb-2025", "hmmt-feb-2026", "math-500", "ifeval", "bbh", *JUDGED)
CODE = {"humaneval": humaneval.STOPS, "mbpp": mbpp.STOPS, "livecodebench": ()}  # executed: their completion stops
MC = ROOT / "examples" / "items" / "multiple-choice.jsonl"
COMMON = ("--no-progress", "--no-history", "--no-cache")


def _kinds() -> list[Any]:
    """(benchmark, mode, prompt kind) for every built-in and every prompt kind, and logprob mode; a code benchmark
    needs the sandbox, MathArena's grader its package."""
    out: list[Any] = []
    for name in (n for n in BUILTINS if not n.startswith("bfcl-")):  # BFCL's runs: tests/benchmarks/test_bfcl.py
        # the kinds the data offers (GPQA's with-examples kinds need cot_examples: llm-wc's)
        kinds = (list(BUILTINS[name].answer_rules) if name == "ifeval"  # its loader checks for nltk's data
                 else load_task(name, data_file=DATA[name], limit=1).prompts.kinds)
        out += [(name, "generate", kind) for kind in kinds]
        if name not in OPEN_ANSWERS and name not in CODE:  # open answers, code: no choices to score by log-probability
            out.append((name, "logprob", None))
    return [pytest.param(*case, marks=_needs(*case)) for case in out]


def _needs(name: str, mode: str, kind: str | None) -> list[pytest.MarkDecorator]:
    tools = ["bubblewrap"] if name in CODE else []
    tools += ["matharena"] if BUILTINS[name].answer_rules.get(kind or "") == "matharena" else []
    return [pytest.mark.needs(*tools)] if tools else []


def _samples(path: Path) -> list[tuple[Any, ...]]:
    return [(s.sample_id, s.prompt, s.raw_output, s.extracted, s.score, s.outcome)
            for s in read_run(path).samples]


def _spec(path: Path) -> RunSpec:
    spec = read_manifest(path).spec
    assert spec is not None and spec.resolved
    return spec


@pytest.mark.parametrize(("name", "mode", "kind"), _kinds())
def test_cli_and_python_give_the_same_spec_run_id_and_samples(name: str, mode: str, kind: str | None,
                                                              tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert set(DATA) == {n for n in BUILTINS if not n.startswith("bfcl-")}  # a new built-in needs its fixture here
    if name == "ifeval":  # lm-eval's instruction checkers need nltk's punkt_tab: the offline stand-in
        import nltk

        monkeypatch.setattr(nltk.data, "path", [str(punkt_dir(tmp_path / "nltk")), *nltk.data.path])
    prompt = ["--prompt", kind] if kind else []
    judge = ["--judge", "scripted:fixed=A"] if name in JUDGED else []
    cli = tmp_path / "cli"
    assert main(["run", name, "--data-file", str(DATA[name]), "--model", "scripted:first", "--mode", mode,
                 *prompt, *judge, "--limit", "3", "-o", str(cli), *COMMON]) in (0, 1)
    options: dict[str, Any] = {"data_file": DATA[name], "mode": mode, "prompt": kind, "limit": 3,
                               "record_history": False, "use_cache": False,
                               **({"judge": "scripted:fixed=A"} if judge else {})}
    plain = proctor.eval(name, "scripted:first", out=tmp_path / "py", **options)

    async def in_a_loop() -> proctor.RunLog:
        return proctor.eval(name, "scripted:first", out=str(tmp_path / "loop"), **options)  # sync call, loop running

    looped = asyncio.run(in_a_loop())
    spec = _spec(cli)
    for other in (plain.path, looped.path):
        assert _spec(other) == spec
        assert read_manifest(other).run_id == read_manifest(cli).run_id == spec.run_id()
        assert _samples(other) == _samples(cli)
    if mode == "generate":  # the benchmark's budget and the kind's stops, from every door
        own = {"tiger-local": (2048, ("Question:",)), "lm-eval": (2048, ("Question:",))}  # the kinds' own (upstream)
        budget, stops = own.get(kind or "", (BUILTINS[name].max_tokens or 1024, ()))
        stops = CODE[name] if name in CODE and kind == "completion" else stops
        if name == "bbh":  # lm-eval's own task YAMLs: `until` and `max_gen_toks` per prompt kind
            asked = load_task(name, data_file=DATA[name], limit=1).prompts.request_defaults(kind or "")
            budget, stops = asked.max_tokens or 1024, asked.stop
        if kind == "simple-evals":  # scripted: sends no system message, so simple-evals' o-series sampler: no limit
            budget = None
        assert spec.generation.max_tokens == budget and spec.generation.stop == stops
        assert spec.scorer.prompt_kind == kind


def test_aime_budget_and_tiger_local_stop_reach_python(tmp_path: Path) -> None:
    """The issue's numbers: AIME from Python had max_tokens 1024, tiger-local lost its `Question:` stop."""
    aime = proctor.eval("aime-2025", "scripted:first", data_file=DATA["aime-2025"], limit=1, out=tmp_path / "a",
                        record_history=False, use_cache=False)
    assert aime.manifest.generation is not None and aime.manifest.generation.max_tokens == 32768
    log = proctor.evaluate(_task("mmlu-pro"), "scripted:first",
                           proctor.RunOptions(out=str(tmp_path / "t"), record_history=False, use_cache=False,
                                              progress=False), scorer=ScorerSpec(prompt_kind="tiger-local"))
    assert log.manifest.generation is not None and "Question:" in log.manifest.generation.stop


def _task(name: str) -> Any:
    return load_task(name, data_file=DATA[name], limit=2)


def test_an_llmwc_config_and_the_cli_give_the_same_spec(tmp_path: Path) -> None:
    """llm-wc's harness and rule: `run --config` and `run … --answer-rule llm-wc-mcqa` with its settings."""
    from proctor.interop.llmwc import read_config
    from proctor.interop.llmwc_config import config_specs
    from proctor.run.resolve import resolve

    config = tmp_path / "gpqa.yaml"
    config.write_text(f"benchmark:\n  name: gpqa\n  subset: main\n  prompt_type: zero_shot\n  seed: 3\n"
                      f"  dataset_path: {DATA['gpqa-main']}\n"
                      "models:\n  - name: m\n    api_base: http://127.0.0.1:9/v1\n")
    (model,) = config_specs(read_config(config), config)
    from_config = resolve(model.spec)
    from_python = resolve(proctor.eval_spec(
        "gpqa-main", "openai:m", data_file=str(DATA["gpqa-main"]), seed=3, prompt="zero_shot",
        answer_rule="llm-wc-mcqa", temperature=0.0, top_p=0.95, max_tokens=32768, gen_seed=3,
        base_url="http://127.0.0.1:9/v1"))
    assert from_config.scorer.answer_rule == "llm-wc-mcqa"
    assert from_config.identity() == from_python.identity()
    assert from_config.run_id() == from_python.run_id()
    assert from_config.model_dump(exclude={"model": {"api_key"}}) == from_python.model_dump(exclude={"model": {"api_key"}})


def _accuracy(path: Path) -> float:
    results = read_run(path).results
    assert results is not None and results.overall.accuracy is not None
    return results.overall.accuracy


def test_cluster_is_a_reporting_choice_from_every_door(tmp_path: Path) -> None:
    """`--cluster` / `cluster=` (stats, #31) travels in the spec, is recorded in the manifest and the samples, and
    never changes the run id; the benchmark's own when not given (MMLU-Pro's src), "none" for items alone."""
    options: dict[str, Any] = {"data_file": DATA["mmlu-pro"], "limit": 4, "record_history": False, "use_cache": False}
    default = proctor.eval("mmlu-pro", "scripted:first", out=tmp_path / "default", **options)
    alone = proctor.eval("mmlu-pro", "scripted:first", out=tmp_path / "alone", cluster="none", **options)
    assert main(["run", "mmlu-pro", "--data-file", str(DATA["mmlu-pro"]), "--model", "scripted:first", "--limit",
                 "4", "--cluster", "category", "-o", str(tmp_path / "cli"), *COMMON]) == 0
    by_category = read_run(tmp_path / "cli")
    assert len({log.manifest.run_id for log in (default, alone, by_category)}) == 1
    assert [_spec(log.path).cluster for log in (default, alone, by_category)] == ["metadata.src", "none", "category"]
    assert [log.manifest.cluster for log in (default, alone, by_category)] == ["metadata.src", None, "category"]
    assert default.results is not None and default.results.cluster == "metadata.src"
    assert all(s.cluster for s in default.samples) and not any(s.cluster for s in alone.samples)
    assert [s.cluster for s in by_category.samples] == [s.category for s in by_category.samples]
    with pytest.raises(proctor.ProctorError, match="^cluster: cannot cluster by 'src'"):
        proctor.eval("mmlu-pro", "scripted:first", out=tmp_path / "bad", cluster="src", **options)
    assert not (tmp_path / "bad").exists()


def test_no_answer_and_truncated_as_change_the_run_id(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A `--no-answer guess` run after a default run is a new run (it resumed the old one, 0.000)."""
    args = ["run", str(MC), "--model", "scripted:fixed=Hmm", "--runs-root", str(tmp_path), *COMMON]
    assert main(args) == 0
    assert main([*args, "--no-answer", "guess"]) == 0
    assert "resuming" not in capsys.readouterr().err
    assert main([*args, "--truncated-as", "excluded"]) == 0
    dirs = sorted(tmp_path.iterdir())
    assert len(dirs) == 3 and len({read_manifest(d).run_id for d in dirs}) == 3
    by_policy = {read_manifest(d).no_answer: _accuracy(d) for d in dirs}
    items = [json.loads(line) for line in MC.read_text().splitlines() if line.strip()]
    # the expected value of a guess: 1/k for k options (lettered choices; True/False 2; ternary 3)
    fixed = {"boolean": 2, "ternary": 3}
    expected = sum(1 / (len(it["choices"]) if it.get("choices") else fixed.get(it.get("modality"), math.inf))
                   for it in items) / len(items)
    assert by_policy["wrong"] == 0.0
    assert by_policy["guess"] == pytest.approx(expected)


def _old_run_id(run_dir: Path, left_out: tuple[str, ...] = ()) -> str:
    """main 6639c56's `run_identity_hash`, copied: dataset content hash, model name, epochs, scorer identity (the
    v4 manifest keeps the scorer's generation settings once, in `generation`, and #29's answer rule and no-answer
    policy at its top level; before #29 the scorer identity had neither: `left_out`)."""
    m = read_manifest(run_dir)
    identity = {"epochs": m.epochs, **m.scorer.as_dict(), "prompt_kind": m.prompt_kind, "extract": m.extract,
                "answer_rule": m.answer_rule, "no_answer": m.no_answer}
    if m.generation is not None:
        identity["generation"] = m.generation.as_dict()
    key = {"dataset": m.dataset.content_hash, "model": m.model.spec,
           **{k: v for k, v in identity.items() if k not in left_out}}
    return hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:12]


@pytest.mark.parametrize("left_out", [(), ("answer_rule", "no_answer")], ids=["after-29", "6639c56"])
def test_a_run_directory_written_before_runspec_is_found_and_resumed(left_out: tuple[str, ...], tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """An old run's directory (its id, its layout, half its samples) is resumed by the same command."""
    runs = tmp_path / "runs"
    args = ["run", str(MC), "--model", "scripted:first", "--runs-root", str(runs), *COMMON]
    assert main(args) == 0
    (new,) = runs.iterdir()
    manifest = json.loads((new / "manifest.json").read_text())
    old_id = _old_run_id(new, left_out)
    manifest["run_id"] = old_id
    m = read_manifest(new)  # written before RunSpec existed: its settings beside the run's facts (migrated to v5)
    manifest |= {"runlog_version": 4, "mode": m.mode, "prompt_kind": m.prompt_kind, "extract": m.extract,
                 "answer_rule": m.answer_rule, "no_answer": m.no_answer, "epochs": m.epochs,
                 "generation": m.generation.as_dict() if m.generation else None}
    del manifest["spec"]
    old = runs / new.name.replace(read_manifest(new).run_id, old_id)
    shutil.move(new, old)
    (old / "manifest.json").write_text(json.dumps(manifest))
    lines = (old / "samples.jsonl").read_text().splitlines(keepends=True)
    (old / "samples.jsonl").write_text("".join(lines[: len(lines) // 2]))
    (old / "results.json").unlink()
    capsys.readouterr()
    assert main(args) == 0
    assert f"resuming {old}: {len(lines) // 2}/{len(lines)} done" in capsys.readouterr().err
    assert [p.name for p in runs.iterdir()] == [old.name]  # no second directory
    assert read_manifest(old).run_id == old_id and len(read_run(old).samples) == len(lines)
    assert main([*args, "--no-answer", "guess"]) == 0  # what the old id left out still makes a new run
    assert len(list(runs.iterdir())) == 2


@pytest.fixture(scope="module")
def two_servers() -> Any:
    pytest.importorskip("uvicorn")
    from proctor.testing import serve

    with serve(responder="first") as model_server, serve(responder="fixed=GRADE: CORRECT") as judge_server:
        yield model_server, judge_server


def test_the_judge_asks_only_its_own_server(two_servers: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """README's `--base-url … --judge openai:…` sent the judge's requests to the model's server."""
    model_server, judge_server = two_servers
    model_server.reset()
    judge_server.reset()
    monkeypatch.setenv("OPENAI_API_KEY", "model-key")
    monkeypatch.setenv("JUDGE_KEY", "judge-key")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    questions = ROOT / "examples" / "items" / "demo.jsonl"  # its short-prose items need a judge
    out = tmp_path / "run"
    assert main(["run", str(questions), "--model", "openai:cand", "--base-url", model_server.base_url,
                 "--judge", "openai:grader", "--judge-base-url", judge_server.base_url, "--judge-api-key-env",
                 "JUDGE_KEY", "--judge-max-tokens", "77", "--max-tokens", "55", "-o", str(out), *COMMON]) in (0, 1)
    chats = [srv.stats()["by_path"].get("/v1/chat/completions", 0) for srv in (model_server, judge_server)]
    log = read_run(out)
    judged = sum(1 for s in log.samples if s.extraction_rule and "judge" in s.extraction_rule)
    assert judged > 0 and chats[1] == judged  # every judge request went to the judge's server
    assert chats[0] == len(log.samples)  # and the model's server got only the model's
    judge_body, model_body = judge_server.stats()["last_body"], model_server.stats()["last_body"]
    assert (judge_body["model"], judge_body["max_tokens"]) == ("grader", 77)  # its own settings too
    assert (model_body["model"], model_body["max_tokens"]) == ("cand", 55)
    spec = log.manifest.spec
    assert spec is not None and spec.judge is not None
    assert spec.model.options["base_url"] == model_server.base_url
    assert spec.judge.base_url == (judge_server.base_url,) and spec.judge.api_key_env == "JUDGE_KEY"
    assert spec.judge.settings is not None and spec.judge.settings.max_tokens == 77
    assert log.manifest.judge is not None and log.manifest.judge.base_urls == [judge_server.base_url]
    assert "judge-key" not in (out / "manifest.json").read_text()
