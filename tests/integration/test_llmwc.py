"""llm-wc: a config runs every model it lists against a real (local) server, writes llm-wc's layout
beside proctor's run logs, and `proctor import` brings that layout into compare and leaderboard."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from proctor.testing import LocalServer

from .conftest import MMLU_PRO, latest

SECRETS = ("sk-env-secret-0001", "literal-secret-0002")
QUICK_FAULTS = ("429", "500", "garbage")  # the server's fault kinds less "hang" (tests/integration/test_faults_and_sharing.py)


def _config(tmp_path: Path, srv: LocalServer) -> Path:
    config = {
        "benchmark": {"name": "mmlu_pro", "output_dir": str(tmp_path / "results" / "mmlu_pro"), "seed": 12345,
                      "limit_subjects": 3, "limit_per_subject": 2, "dataset_path": str(MMLU_PRO),
                      "prompt_type": "zero_shot"},
        "models": [
            {"name": "tiny:a", "api_base": srv.base_url, "api_key_env": "LLMWC_TEST_KEY", "request_overrides": {}},
            {"name": "tiny:b", "api_base": srv.base_url, "api_key": SECRETS[1],
             "request_overrides": {"temperature": 0.5, "max_tokens": 64}},
        ],
    }
    path = tmp_path / "mmlu_pro.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


def _run(cli: Any, tmp_path: Path, srv: LocalServer, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("LLMWC_TEST_KEY", SECRETS[0])
    res = cli("run", "--config", _config(tmp_path, srv), "--store", tmp_path / "s.sqlite", "--no-progress",
              "--max-retries", "0", "--max-error-rate", "1")
    assert res.code == 0, res.err
    (root,) = (tmp_path / "results").glob("mmlu_pro_*")
    return root


def test_config_runs_every_model_and_writes_llmwc_layout(cli: Any, tmp_path: Path, server: LocalServer,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    # some requests fail: errors are counted apart, never as answers (no hangs: each would wait out the 120 s timeout)
    server.configure(fault_rate=0.25, faults=QUICK_FAULTS)
    root = _run(cli, tmp_path, server, monkeypatch)
    run = json.loads((root / "run.json").read_text())
    assert [m["name"] for m in run["models"]] == ["tiny:a", "tiny:b"]
    assert all(m["api_key"] is None for m in run["models"]) and run["models"][0]["api_key_env"] == "LLMWC_TEST_KEY"
    assert run["benchmark"]["dataset_path"] == str(MMLU_PRO.resolve())
    for path in root.rglob("*"):
        if path.is_file():
            assert not any(s in path.read_text(errors="replace") for s in SECRETS), path
    for name, temperature in (("tiny_a", 0.0), ("tiny_b", 0.5)):
        summary = json.loads((root / "models" / name / "summary.json").read_text())
        rows = json.loads((root / "models" / name / "results.json").read_text())
        assert summary["correct"] + summary["incorrect"] + summary["errors"] + summary["unscored"] == summary["total"]
        assert summary["total"] == len(rows) == 6  # 3 subjects × 2
        assert summary["request_params"]["temperature"] == temperature and summary["request_params"]["seed"] == 12345
        assert summary["dataset_path"] == str(MMLU_PRO.resolve())
        assert {"question_id", "question", "options", "answer", "category", "pred", "model_outputs"} <= set(rows[0])
        assert all(r["pred"] is None for r in rows if "error" in r)
        run_log = json.loads((root / "runs" / name / "results.json").read_text())  # proctor's own log beside
        assert run_log["overall"]["n_errors"] == summary["errors"]
    manifest = json.loads((root / "runs" / "tiny_b" / "manifest.json").read_text())
    assert manifest["spec"]["generation"]["max_tokens"] == 64 and manifest["model"]["spec"] == "openai:tiny:b"
    # llm-wc's harness, llm-wc's parser: whatever the prompt kind (zero_shot here, proctor's own)
    assert (manifest["spec"]["scorer"]["prompt_kind"], manifest["spec"]["scorer"]["answer_rule"]) == ("zero_shot", "llm-wc-mcqa")
    answered = [s for s in latest(root / "runs" / "tiny_a").values() if s["outcome"] != "error"]
    assert answered and all(s["details"]["readings"]["reference"]["reader"] == "llm-wc-mcqa" for s in answered)


def test_import_feeds_compare_and_leaderboard(cli: Any, tmp_path: Path, server: LocalServer,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    root = _run(cli, tmp_path, server, monkeypatch)
    store = tmp_path / "history.sqlite"
    res = cli("import", root, "--store", store, "--runs-root", tmp_path / "runs")
    assert res.code == 0, res.err
    assert res.out.count("imported ") == 2
    imported = sorted((tmp_path / "runs" / "imported").iterdir())
    assert len(imported) == 2
    board = cli("leaderboard", "mmlu-pro", "--store", store)
    assert board.code == 0, board.err
    assert "tiny:a" in board.out and "tiny:b" in board.out
    res = cli("compare", imported[0], imported[1], "--store", store)  # two settings: two boards, not compared
    assert res.code == 2 and "different settings" in res.err
    res = cli("compare", imported[0], imported[1], "--store", store, "--mix-settings")
    assert res.code == 0, res.err


def test_import_of_an_upstream_results_directory(cli: Any, tmp_path: Path) -> None:
    """The shape of llm-wc's published results: summary without errors, a row with no prediction."""
    root = tmp_path / "mmlu_pro_20260126T154345Z"
    model = root / "models" / "qwen3_30b"
    model.mkdir(parents=True)
    (root / "run.json").write_text(json.dumps({
        "benchmark": {"name": "mmlu_pro", "output_dir": str(root), "seed": 12345, "limit_subjects": None,
                      "limit_per_subject": 5},
        "request_defaults": {"temperature": 0.0}, "models": [{"name": "qwen3:30b", "api_key": "ollama"}],
        "started_at": "2026-01-26T15:43:45Z"}))
    rows = [{"question_id": i, "question": f"Q{i}?", "options": ["x", "y", "z"], "answer": "B", "answer_index": 1,
             "cot_content": "", "category": "law" if i % 2 else "business", "src": "synthetic",
             "pred": [None, "B", "b", "C"][i % 4], "model_outputs": "" if i % 4 == 0 else "The answer is (B)."}
            for i in range(8)]
    (model / "results.json").write_text(json.dumps(rows, indent=2))
    (model / "summary.json").write_text(json.dumps({"accuracy": 0.5, "correct": 4, "incorrect": 4, "total": 8,
                                                    "model": "qwen3:30b", "seed": 12345}))
    (root / "models" / "gemma3_27b").mkdir()
    (root / "models" / "gemma3_27b" / "summary.json").write_text("{}")
    res = cli("import", root, "--store", tmp_path / "s.sqlite", "--runs-root", tmp_path / "runs")
    assert res.code == 0, res.err
    assert "gemma3_27b: no results.json (summary only): not imported" in res.err
    (run_dir,) = (tmp_path / "runs" / "imported").iterdir()
    results = json.loads((run_dir / "results.json").read_text())
    assert results["overall"]["n_scored"] == 8 and results["overall"]["accuracy"] == 0.5
    samples = [json.loads(x) for x in (run_dir / "samples.jsonl").read_text().splitlines()]
    assert [s["outcome"] for s in samples[:4]] == ["no_answer", "correct", "correct", "wrong"]
    assert samples[0]["item_id"] == "mmlu-pro.0"  # the same item ids as proctor's own MMLU-Pro runs


def test_bad_config_is_a_clear_error(cli: Any, tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump({"benchmark": {"name": "mmlu_pro"}, "models": [
        {"name": "m", "request_overrides": {"frequency_penalty": 0.7}}, {"api_base": "x"}]}))
    res = cli("run", "--config", path)
    assert res.code == 2 and "Traceback" not in res.err
    assert f"{path}:7: models[1].name: required field is missing" in res.err


def test_every_exported_run_has_per_question_results_and_names_its_data_file(cli: Any, tmp_path: Path,
                                                                              server: LocalServer) -> None:
    """`models/<name>/results.json` was missing; `dataset_path` named the hub repo under --data-file."""
    server.configure(fault_rate=0.3, faults=QUICK_FAULTS)
    run = tmp_path / "run"
    res = cli("run", "mmlu-pro", "--data-file", MMLU_PRO, "--model", "openai:tiny", "--base-url", server.base_url,
              "--limit-per-category", "2", "--max-retries", "0", "-o", run, "--store", tmp_path / "s.sqlite",
              "--no-progress", "--max-error-rate", "1")
    assert res.code == 0, res.err
    out = tmp_path / "llmwc"
    assert cli("export", run, "--to", "llmwc", "-o", out).code == 0
    summary = json.loads((out / "models" / "tiny" / "summary.json").read_text())
    rows = json.loads((out / "models" / "tiny" / "results.json").read_text())
    assert summary["dataset_path"] == str(MMLU_PRO.resolve())
    assert summary["correct"] + summary["incorrect"] + summary["errors"] + summary["unscored"] == summary["total"]
    assert len(rows) == summary["total"] and all("pred" in r and "model_outputs" in r for r in rows)
    assert {r["question_id"] for r in rows} and all(isinstance(r["options"], list) for r in rows)


# ---------------------------------------------------------------- issue 22 items 7, 9; issue 20 item 6


def _write_config(tmp_path: Path, srv: LocalServer, models: list[dict[str, Any]], **benchmark: Any) -> Path:
    config = {"benchmark": {"name": "mmlu_pro", "output_dir": str(tmp_path / "results" / "mmlu_pro"),
                            "seed": 12345, "limit_subjects": 1, "limit_per_subject": 2,
                            "dataset_path": str(MMLU_PRO), **benchmark},
              "models": [{"api_base": srv.base_url, "api_key": "ollama", **m} for m in models]}
    path = tmp_path / "mmlu_pro.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


def _files_text(root: Path) -> str:
    return "\n".join(p.read_text(errors="replace") for p in root.rglob("*") if p.is_file() and p.suffix != ".sqlite")


def test_keys_in_the_base_url_are_redacted_in_every_file(cli: Any, tmp_path: Path, server: LocalServer) -> None:
    """A key in `api_base` user info or `?api_key=` never reaches run.json, summary.json, config.yaml, the
    manifest or the samples (22.7)."""
    userinfo = server.base_url.replace("http://", "http://me:userinfo-secret-77@")
    path = _write_config(tmp_path, server, [{"name": "tiny:a", "api_base": userinfo, "api_key": None},
                                            {"name": "tiny:b", "api_base": server.base_url + "?api_key=query-secret-88"}])
    res = cli("run", "--config", path, "--store", tmp_path / "s.sqlite", "--no-progress", "--max-retries", "0",
              "--max-error-rate", "1")
    assert "Traceback" not in res.err, res.err
    (root,) = (tmp_path / "results").glob("mmlu_pro_*")
    text = _files_text(root)
    assert {"run.json", "config.yaml"} <= {p.name for p in root.iterdir()}
    assert "manifest.json" in text or (root / "runs" / "tiny_a" / "manifest.json").is_file()
    for secret in ("userinfo-secret-77", "query-secret-88"):
        assert secret not in text and secret not in res.out and secret not in res.err
    assert "***@127.0.0.1" in (root / "run.json").read_text()


def test_summary_seed_and_config_yaml_are_llmwcs(cli: Any, tmp_path: Path, server: LocalServer) -> None:
    """summary.json `seed` is the config's; config.yaml is the resolved run as llm-wc saves it (20.6)."""
    path = _write_config(tmp_path, server, [{"name": "tiny:a", "request_overrides": {"max_tokens": 64}}])
    res = cli("run", "--config", path, "--store", tmp_path / "s.sqlite", "--no-progress", "--max-error-rate", "1")
    assert res.code == 0, res.err
    (root,) = (tmp_path / "results").glob("mmlu_pro_*")
    summary = json.loads((root / "models" / "tiny_a" / "summary.json").read_text())
    assert summary["seed"] == 12345
    saved = yaml.safe_load((root / "config.yaml").read_text())
    assert list(saved) == ["benchmark", "request_defaults", "models"]
    assert saved["benchmark"]["output_dir"] == str(root) and saved["benchmark"]["seed"] == 12345
    assert saved["request_defaults"] == {"temperature": 0.0, "top_p": 0.95, "max_tokens": 32768,
                                         "frequency_penalty": 0.0, "presence_penalty": 0.0, "seed": 12345}
    assert saved["models"] == [{"name": "tiny:a", "api_base": server.base_url, "api_key": None, "api_key_env": None,
                                "output_name": None, "request_overrides": {"max_tokens": 64}}]
    run = json.loads((root / "run.json").read_text())
    assert {k: v for k, v in run.items() if k != "started_at"} == saved


@pytest.mark.parametrize(("flags", "refused"), [
    (["mmlu-pro"], "DATASET... does not apply with --config"),
    (["--temperature", "0.7"], "--temperature does not apply with --config (set request_defaults.temperature"),
    (["--batch"], "--batch does not apply with --config"),
    (["--price-in", "1"], "--price-in does not apply with --config (set --prices instead)"),
    (["--seed", "3"], "--seed does not apply with --config (set benchmark.seed instead)"),
])
def test_run_options_with_config_are_refused_by_name(cli: Any, tmp_path: Path, server: LocalServer,
                                                     flags: list[str], refused: str) -> None:
    path = _write_config(tmp_path, server, [{"name": "tiny:a"}])
    res = cli("run", *flags, "--config", path, "--store", tmp_path / "s.sqlite")
    assert res.code == 2 and refused in res.err and "Traceback" not in res.err, res.err
    assert not (tmp_path / "results").exists()


def test_run_options_with_config_are_applied(cli: Any, tmp_path: Path, server: LocalServer) -> None:
    """--model picks one of the config's models; --max-tokens, --no-cache, --prices, --max-cost apply to it."""
    path = _write_config(tmp_path, server, [{"name": "tiny:a"}, {"name": "tiny:b"}])
    prices = tmp_path / "prices.yaml"
    prices.write_text("models:\n  openai:tiny:b: {input: 1, output: 2}\n")
    res = cli("run", "--config", path, "--model", "tiny:b", "--max-tokens", "48", "--no-cache", "--prices", prices,
              "--max-cost", "5", "--store", tmp_path / "s.sqlite", "--no-progress", "--max-error-rate", "1")
    assert res.code == 0, res.err
    (root,) = (tmp_path / "results").glob("mmlu_pro_*")
    assert [d.name for d in (root / "models").iterdir()] == ["tiny_b"]
    manifest = json.loads((root / "runs" / "tiny_b" / "manifest.json").read_text())
    assert manifest["spec"]["generation"]["max_tokens"] == 48
    assert [m["name"] for m in json.loads((root / "run.json").read_text())["models"]] == ["tiny:b"]
    res = cli("run", "--config", path, "--model", "nope", "--store", tmp_path / "s.sqlite")
    assert res.code == 2 and "--model nope: not a model of the config (it lists tiny:a, tiny:b)" in res.err


def test_model_names_never_collide_nor_climb(cli: Any, tmp_path: Path, server: LocalServer) -> None:
    """`a b` and `a_b` get two directories; `..` cannot overwrite the results' own files (22.4)."""
    path = _write_config(tmp_path, server, [{"name": "a b"}, {"name": "a_b"}, {"name": ".."}])
    res = cli("run", "--config", path, "--store", tmp_path / "s.sqlite", "--no-progress", "--max-error-rate", "1")
    assert res.code == 0, res.err
    (root,) = (tmp_path / "results").glob("mmlu_pro_*")
    dirs = sorted(d.name for d in (root / "models").iterdir())
    assert len(dirs) == 3 and "a_b" in dirs and all(not d.startswith(".") for d in dirs)
    names = {json.loads((root / "models" / d / "summary.json").read_text())["model"] for d in dirs}
    assert names == {"a b", "a_b", ".."}
    assert not (root / "results.json").exists() and len(list((root / "runs").iterdir())) == 3
    out = tmp_path / "single"
    res = cli("run", "mmlu-pro", "--data-file", MMLU_PRO, "--model", "openai:..", "--base-url", server.base_url,
              "--limit", "2", "-o", out, "--store", tmp_path / "s.sqlite", "--no-progress", "--max-error-rate", "1")
    assert res.code == 0, res.err
    assert "overall" in json.loads((out / "results.json").read_text())  # proctor's own, not llm-wc's rows
    assert not (out / "models").exists()  # a plain run writes proctor's log only (`proctor export --to llmwc`)


def test_names_from_the_config_never_reach_the_terminal_raw(cli: Any, tmp_path: Path, server: LocalServer) -> None:
    """Issue 22 item 14: a model name with escapes prints escaped in `run --config`'s lines."""
    path = _write_config(tmp_path, server, [{"name": "tiny\x1b[2J\x1b]8;;x\x07"}])
    res = cli("run", "--config", path, "--store", tmp_path / "s.sqlite", "--no-progress", "--max-error-rate", "1")
    assert res.code == 0, res.err
    assert "\x1b" not in res.out + res.err and "\x07" not in res.out + res.err
    assert "tiny\\x1b[2J" in res.out


def test_cli_and_python_write_the_same_llmwc_results(cli: Any, tmp_path: Path, server: LocalServer) -> None:
    """`proctor run --config` and `proctor.eval_config` build the same specs (the same run ids) and the pipeline
    writes the same results directory: every file byte for byte but the time stamp and the folder it names."""
    import proctor

    path = _write_config(tmp_path, server, [{"name": "tiny:a"}, {"name": "tiny:b", "request_overrides":
                                                                  {"max_tokens": 64}}])
    store = tmp_path / "s.sqlite"  # one request cache: the Python run gets the answers the CLI run got
    res = cli("run", "--config", path, "-o", tmp_path / "cli" / "mmlu", "--store", store, "--no-progress",
              "--max-error-rate", "1")
    assert res.code == 0, res.err
    logs = proctor.eval_config(path, out=tmp_path / "py" / "mmlu", store=store)
    (cli_root,) = (tmp_path / "cli").glob("mmlu_*")
    (py_root,) = (tmp_path / "py").glob("mmlu_*")
    assert [log.path for log in logs] == [py_root / "runs" / "tiny_a", py_root / "runs" / "tiny_b"]
    assert [json.loads((cli_root / "runs" / d / "manifest.json").read_text())["run_id"] for d in ("tiny_a", "tiny_b")] \
        == [log.manifest.run_id for log in logs]
    names = sorted(str(p.relative_to(cli_root)) for p in cli_root.rglob("*") if p.is_file() and "runs" not in p.parts)
    assert names == ["config.yaml", "models/tiny_a/results.json", "models/tiny_a/summary.json",
                     "models/tiny_b/results.json", "models/tiny_b/summary.json", "run.json"]
    assert names == sorted(str(p.relative_to(py_root)) for p in py_root.rglob("*")
                           if p.is_file() and "runs" not in p.parts)
    for name in names:
        cli_text, py_text = (cli_root / name).read_text(), (py_root / name).read_text()
        if name == "run.json":
            cli_text, py_text = (json.dumps({**json.loads(t), "started_at": None}) for t in (cli_text, py_text))
        assert cli_text.replace(str(cli_root), "ROOT") == py_text.replace(str(py_root), "ROOT"), name
    with pytest.raises(proctor.ProctorError, match="base_url: set per model in the config"):
        proctor.eval_config(path, base_url=server.base_url)
    with pytest.raises(proctor.ProctorError, match="temperature: no such option here"):
        proctor.eval_config(path, temperature=0.5)
