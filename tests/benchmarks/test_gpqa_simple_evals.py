"""GPQA-Diamond with openai/simple-evals' template (`simple-evals`): the prompt byte for byte and its answer
regex, checked against the strings of simple-evals@ee3b0318 (common.py QUERY_TEMPLATE_MULTICHOICE,
ANSWER_PATTERN_MULTICHOICE; gpqa_eval.py: `re.search`, then `extracted_answer == correct_answer`)."""

from __future__ import annotations

import importlib
import json
import re
import sys
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

import pytest
from benchmark_replay import run, script

from proctor.benchmarks import load_task

DIAMOND = Path(__file__).parents[1] / "fixtures" / "upstream" / "gpqa" / "gpqa_diamond.csv"
QUERY_TEMPLATE_MULTICHOICE = """
Answer the following multiple choice question. The last line of your response should be of the following format: 'Answer: $LETTER' (without quotes) where LETTER is one of ABCD. Think step by step before answering.

{Question}

A) {A}
B) {B}
C) {C}
D) {D}
""".strip()
ANSWER_PATTERN_MULTICHOICE = r"(?i)Answer[ \t]*:[ \t]*\$?([A-D])\$?"


def simple_evals_score(reply: str, correct: str) -> bool:
    match = re.search(ANSWER_PATTERN_MULTICHOICE, reply)
    return (match.group(1) if match else None) == correct


def test_prompt_is_simple_evals_template() -> None:
    task = load_task("gpqa-diamond", data_file=DIAMOND, limit=3)
    for item in task.items:
        (message,) = task.prompts.messages(item, "simple-evals")
        assert message.content == QUERY_TEMPLATE_MULTICHOICE.format(Question=item.prompt, **(item.choices or {}))


def test_replies_are_scored_as_simple_evals_scores(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    task = load_task("gpqa-diamond", data_file=DIAMOND)
    forms = ["Reasoning...\nAnswer: {x}", "answer: {lx}", "Answer:$${x}$", "Answer: {x}\nAnswer: {y}",
             "The answer is ({x})", "ANSWER :\t{x}"]
    replies, expected = {}, {}
    for i, item in enumerate(task.items):
        x = item.best_answer
        y = "ABCD"[("ABCD".index(x) + 1) % 4]
        replies[item.identifier] = forms[i % len(forms)].format(x=x, lx=x.lower(), y=y)
        expected[item.identifier] = simple_evals_score(replies[item.identifier], x)
    model = f"scripted:file={script(tmp_path / 'r.jsonl', 'gpqa-diamond', DIAMOND, 'simple-evals', replies)}"
    ran = run(capsys, tmp_path, "gpqa-diamond", DIAMOND, model, "run", "--prompt", "simple-evals")
    assert ran.code == 0, ran.err
    assert ran.manifest["spec"]["dataset"]["prompt_options"] == {"sampler": "o-series"}  # scripted: no system
    assert {k: s["outcome"] == "correct" for k, s in ran.samples.items()} == expected
    assert 0 < sum(expected.values()) < len(expected)  # lower-case and "answer is (X)" are wrong there
    scorer = ran.manifest["spec"]["scorer"]  # manifest v5: each setting once, in the spec
    assert (scorer["prompt_kind"], scorer["answer_rule"]) == ("simple-evals", "simple-evals-mcq")


# ---------------------------------------------------------------- simple-evals' request per model family

_REPO = Path(__file__).resolve().parents[2]
SIMPLE_EVALS = next((p / "shared" / "upstream" / "simple-evals" for p in (_REPO.parent, _REPO.parent.parent)
                     if (p / "shared" / "upstream" / "simple-evals").is_dir()), None)


def _samplers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, list[dict[str, Any]]]:
    """simple-evals' sampler modules as they are (the folder as a package), with a stand-in `openai` client
    that records each `chat.completions.create` call's keywords (openai is not installed here)."""
    if SIMPLE_EVALS is None:
        pytest.skip("../shared/upstream/simple-evals is absent")
    calls: list[dict[str, Any]] = []

    def create(**kwargs: Any) -> Any:
        calls.append(kwargs)
        return SimpleNamespace(choices=[SimpleNamespace(message=SimpleNamespace(content="Answer: A"))], usage=None)

    client = SimpleNamespace(chat=SimpleNamespace(completions=SimpleNamespace(create=create)))
    stub = ModuleType("openai")
    stub.OpenAI = lambda *a, **k: client  # type: ignore[attr-defined]
    stub.BadRequestError = type("BadRequestError", (Exception,), {})  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "openai", stub)
    (tmp_path / "se").symlink_to(SIMPLE_EVALS, target_is_directory=True)
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in [n for n in sys.modules if n == "se" or n.startswith("se.")]:  # each test its own client
        monkeypatch.delitem(sys.modules, name)
    chat = importlib.import_module("se.sampler.chat_completion_sampler")
    o_series = importlib.import_module("se.sampler.o_chat_completion_sampler")
    return SimpleNamespace(chat=chat, o=o_series), calls


def _sent_by_proctor(tmp_path: Path, model: str, *extra: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The body a stand-in server received for the first item, and the resolved spec's manifest."""
    from proctor.cli import main
    from proctor.testing.server import serve

    with serve(responder="fixed=Answer: A") as srv:
        out = tmp_path / model.replace(":", "_")
        assert main(["run", "gpqa-diamond", "--data-file", str(DIAMOND), "--model", model, "--base-url",
                     srv.base_url, "--prompt", "simple-evals", "--limit", "1", "-o", str(out), "--no-progress",
                     "--no-history", "--no-cache", *extra]) == 0
        body = srv.stats()["last_body"]
    return body, json.loads((out / "manifest.json").read_text())


def test_a_chat_model_gets_simple_evals_chat_sampler_request(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """gpt-4o, llama, qwen… in simple-evals: ChatCompletionSampler(system_message=OPENAI_SYSTEM_MESSAGE_API,
    max_tokens=2048) (simple_evals.py's model table), temperature its default 0.5."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    samplers, calls = _samplers(tmp_path, monkeypatch)
    body, manifest = _sent_by_proctor(tmp_path, "openai:gpt-4o")
    user = [m for m in body["messages"] if m["role"] == "user"]
    sampler = samplers.chat.ChatCompletionSampler(model="gpt-4o", system_message=samplers.chat.OPENAI_SYSTEM_MESSAGE_API,
                                                  max_tokens=2048)
    sampler(user)
    (theirs,) = calls
    assert body["messages"] == theirs["messages"]  # the system message first, then the prompt
    assert (body["temperature"], body["max_tokens"]) == (theirs["temperature"], theirs["max_tokens"]) == (0.5, 2048)
    assert manifest["spec"]["dataset"]["prompt_options"] == {"sampler": "chat"}


def test_an_o_model_gets_the_o_series_request_and_the_family_is_a_setting(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """o1, o3-mini…: OChatCompletionSampler sends the messages alone (no system message, no temperature, no token
    limit); `--sampler` chooses the family whatever the name, in the run id; `--max-tokens` still sends one."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    samplers, calls = _samplers(tmp_path, monkeypatch)
    body, manifest = _sent_by_proctor(tmp_path, "openai:o3-mini")
    samplers.o.OChatCompletionSampler(model="o3-mini")([m for m in body["messages"]])
    (theirs,) = calls
    assert body["messages"] == theirs["messages"] and "temperature" not in body and "temperature" not in theirs
    assert "max_tokens" not in body and "max_tokens" not in theirs and "max_completion_tokens" not in theirs
    assert manifest["spec"]["generation"]["max_tokens"] is None
    capped, _ = _sent_by_proctor(tmp_path / "capped", "openai:o3-mini", "--max-tokens", "1000")
    assert capped["max_tokens"] == 1000
    assert manifest["spec"]["dataset"]["prompt_options"] == {"sampler": "o-series"}
    forced, forced_manifest = _sent_by_proctor(tmp_path / "forced", "openai:gpt-4o", "--sampler", "o-series")
    assert forced["messages"] == body["messages"] and "temperature" not in forced
    chat, chat_manifest = _sent_by_proctor(tmp_path / "chat", "openai:gpt-4o")
    assert chat["temperature"] == 0.5 and chat["messages"][0]["role"] == "system"
    assert chat_manifest["run_id"] != forced_manifest["run_id"]


def test_the_sampler_is_refused_where_it_means_nothing(tmp_path: Path) -> None:
    from proctor.api import eval_spec
    from proctor.run.resolve import resolve
    from proctor.util.errors import ProctorError

    plain = resolve(eval_spec("gpqa-diamond", "scripted:first", data_file=str(DIAMOND)))
    assert plain.dataset.prompt_options == {} and plain.generation.system is None  # other kinds: one request
    with pytest.raises(ProctorError, match="sampler"):
        resolve(eval_spec("gpqa-diamond", "scripted:first", data_file=str(DIAMOND), sampler="chat"))
    with pytest.raises(ProctorError, match="sampler"):
        resolve(eval_spec("gpqa-diamond", "scripted:first", data_file=str(DIAMOND), prompt="simple-evals",
                          sampler="gpt"))
