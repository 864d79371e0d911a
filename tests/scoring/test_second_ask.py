"""MathArena's second ask against MathArena's own code: its last-chance message (`runner._build_last_chance_prompt`)
and the conversation its `PureModelSolver.last_chance` sends (after `APIClient._drop_cot`), read from the installed
`matharena` package's files (its package imports its serving stack, which is not installed: the functions are
taken from its source as they are) and compared with what a scripted stand-in server received from proctor."""

from __future__ import annotations

import json
import textwrap
from collections import UserDict, namedtuple
from pathlib import Path
from typing import Any

import pytest
import yaml

from proctor.benchmarks import load_task
from proctor.cli import main
from proctor.log.runlog import Outcome, iter_samples
from proctor.scoring.second_ask import MATHARENA_LAST_CHANCE, matharena_no_answer
from proctor.testing.server import serve

pytestmark = pytest.mark.needs("matharena")

_REPO = Path(__file__).resolve().parents[2]
UPSTREAM = next((p / "shared" / "upstream" / "matharena" for p in (_REPO.parent, _REPO.parent.parent)
                 if (p / "shared" / "upstream" / "matharena").is_dir()), _REPO.parent / "shared" / "upstream" / "matharena")
SolverResponse = namedtuple("SolverResponse", "idx conversation detailed_cost history")


def _source_of(text: str, name: str) -> str:
    """The source of the function or class `name` in a module's text, dedented (its decorators left out): the
    module itself may not parse here (runner.py uses Python 3.12's f-strings)."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.lstrip().startswith((f"def {name}(", f"class {name}(")))
    indent = len(lines[start]) - len(lines[start].lstrip())
    end = next((j for j in range(start + 1, len(lines)) if lines[j].strip()
                and len(lines[j]) - len(lines[j].lstrip()) <= indent), len(lines))
    return textwrap.dedent("\n".join(lines[start:end]))


def _matharena_functions() -> dict[str, Any]:
    """MathArena's own functions (runner, solver, API client), compiled from its installed source files."""
    import matharena

    root = Path(matharena.__file__).parent
    wanted = {"runner.py": ("_build_last_chance_prompt",), "api_client.py": ("_drop_cot",),
              "solvers/pure_model_solver.py": ("_PromptFields", "build_query", "last_chance")}
    namespace: dict[str, Any] = {"UserDict": UserDict, "Any": Any, "SolverResponse": SolverResponse}
    for rel, names in wanted.items():
        text = (root / rel).read_text()
        for name in names:
            exec(compile(_source_of(text, name), str(root / rel), "exec"), namespace)  # noqa: S102
    return namespace


class _Solver:
    """What MathArena's `last_chance` reads of its solver: the prompt, a client capturing the request."""

    def __init__(self, ns: dict[str, Any], template: str) -> None:
        self.default_prompt_template = template
        self.last_chance_prompt = ns["_build_last_chance_prompt"](None, None)
        self.last_chance_client = self
        self.sent: list[list[dict[str, Any]]] = []
        self._drop_cot = ns["_drop_cot"].__get__(self)

    def run_queries(self, queries: list[Any], **_: Any) -> Any:
        self.sent = [self._drop_cot(q) for q in queries]  # the messages its chat-completions payload carries
        yield 0, queries[0], {}


def matharena_second_request(prompt_template: str, problem: str, reply: str) -> list[dict[str, Any]]:
    """The messages MathArena's runner sends as its last chance after `reply` (a chat completion's message, as
    its client records it: `model_dump()` without nulls)."""
    ns = _matharena_functions()
    solver = _Solver(ns, prompt_template)
    conversation = ns["build_query"](solver, problem, None) + [{"content": reply, "role": "assistant"}]
    ns["last_chance"](solver, SolverResponse(0, conversation, {}, None))
    (sent,) = solver.sent
    return sent


def test_the_message_is_matharenas() -> None:
    assert _matharena_functions()["_build_last_chance_prompt"](None, None) == MATHARENA_LAST_CHANCE


@pytest.mark.parametrize("reply", ["so \\boxed{7}", "The answer is 7.", "", "\\boxed{}", "$\\boxed{1/2}$ done",
                                   "\\boxed{None}", "<think>\\boxed{3}</think> unsure", "\\boxed{\\boxed{"])
def test_it_asks_when_matharenas_strict_parser_reads_nothing(reply: str) -> None:
    from matharena.parser import extract_answer

    assert matharena_no_answer(reply) is (extract_answer(reply, True)[0] is None)
    assert matharena_no_answer("The answer is 7.") and not matharena_no_answer("so \\boxed{7}")


def _matharena_template() -> str:
    """MathArena's prompt template for AIME 2026 as `Runner.prepare_run` builds it from the competition config."""
    config = UPSTREAM / "configs" / "competitions" / "aime" / "aime_2026.yaml"
    if not config.is_file():
        pytest.skip(f"{config} is absent (../shared/upstream holds MathArena's configs)")
    instruction = str(yaml.safe_load(config.read_text())["instruction"])
    return instruction if "{problem}" in instruction else instruction + "\n\n{problem}"


def _aime(tmp_path: Path) -> Path:
    data = tmp_path / "aime.jsonl"
    data.write_text(json.dumps({"problem_idx": 1, "problem": "Synthetic problem: find $y$.", "answer": 7,
                                "problem_type": ["Algebra"]}) + "\n")
    return data


def _run(tmp_path: Path, srv: Any, data: Path, out: str, *extra: str) -> int:
    return main(["run", "aime-2026", "--data-file", str(data), "--model", "openai:proctor-test", "--base-url",
                 srv.base_url, "-o", str(tmp_path / out), "--no-progress", "--no-history", "--no-cache", *extra])


def test_the_second_request_is_matharenas(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A reply with no boxed answer is asked again with MathArena's conversation; the second reply is graded and
    recorded; `--no-second-ask` sends one request (another run id)."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    data = _aime(tmp_path)
    task = load_task("aime-2026", data_file=data)
    (first,) = task.prompts.messages(task.items[0], "matharena")
    script = tmp_path / "replies.jsonl"
    script.write_text(json.dumps({"prompt": first.content, "answer": "I believe it is 7."}) + "\n"
                      + json.dumps({"prompt": MATHARENA_LAST_CHANCE, "answer": "\\boxed{7}"}) + "\n")
    with serve(responder=f"file={script}") as srv:
        assert _run(tmp_path, srv, data, "asked") == 0
        stats = srv.stats()
        assert stats["by_path"]["/v1/chat/completions"] == 2
        sent = stats["last_body"]["messages"]
        assert stats["last_body"]["max_tokens"] == 32_768  # the first request's settings, as MathArena's client
        template = _matharena_template()
        assert sent == matharena_second_request(template, "Synthetic problem: find $y$.", "I believe it is 7.")
        assert json.dumps(sent, sort_keys=True) == json.dumps(
            matharena_second_request(template, "Synthetic problem: find $y$.", "I believe it is 7."), sort_keys=True)
        srv.reset()
        assert _run(tmp_path, srv, data, "once", "--no-second-ask") == 0
        assert srv.stats()["by_path"]["/v1/chat/completions"] == 1
    (asked,) = iter_samples(tmp_path / "asked" / "samples.jsonl")
    assert asked.outcome is Outcome.CORRECT and asked.raw_output == "I believe it is 7."
    record = asked.details.get("second_ask")
    assert record.rule == "matharena-last-chance" and record.raw_output == "\\boxed{7}" and record.prompt == sent
    (once,) = iter_samples(tmp_path / "once" / "samples.jsonl")
    assert once.outcome is Outcome.CORRECT and once.details.get("second_ask") is None  # non-strict: the last integer
    manifests = [json.loads((tmp_path / d / "manifest.json").read_text()) for d in ("asked", "once")]
    assert [m["spec"]["scorer"]["second_ask"] for m in manifests] == [True, False]
    assert manifests[0]["run_id"] != manifests[1]["run_id"]
