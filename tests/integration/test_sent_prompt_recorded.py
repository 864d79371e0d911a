"""#47 case 4: what was sent is what is recorded. A request sent as plain text to /v1/completions is recorded as that
text (samples.jsonl, no role), printed as text by `proctor prompt`, compared as text by `explain` and shown as text
by the report; a chat request as its messages; the provenance's `chat` flag is what the backend sent. Checked
against the stand-in server's own counts and the last body it received, for a spec benchmark and a built-in one."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from proctor import read_run
from proctor.analysis.explain import explain_logs
from proctor.report.data import summarize_run
from proctor.report.html import sample_blob
from proctor.testing import LocalServer

from .conftest import MMLU_PRO, chat_requests

EXAMPLES = Path(__file__).parents[2] / "examples" / "benchmarks"
QUIET = ("--no-progress", "--no-history", "--no-cache")
# name → (run arguments, sent as text); capitals is a spec benchmark (completion format, lm-eval's default)
CASES: dict[str, tuple[tuple[str, ...], bool]] = {
    "spec-completion": (("capitals.yaml", "--mode", "generate"), True),
    "spec-chat": (("capitals.yaml", "--mode", "generate", "--format", "chat"), False),
    "builtin-chat": (("mmlu-pro", "--data-file", str(MMLU_PRO), "--limit", "4"), False),
    "builtin-completion": (("mmlu-pro", "--data-file", str(MMLU_PRO), "--limit", "4", "--no-chat"), True),
}


@pytest.fixture
def capitals(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    shutil.copy(EXAMPLES / "capitals.yaml", tmp_path / "capitals.yaml")
    shutil.copytree(EXAMPLES / "capitals", tmp_path / "capitals")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _run(cli: Any, server: LocalServer, out: Path, args: tuple[str, ...]) -> None:
    r = cli("run", *args, "--model", "openai:m", "--base-url", server.base_url, "-o", out, *QUIET)
    assert r.code in (0, 1), r.err


@pytest.mark.parametrize("case", list(CASES))
def test_what_is_recorded_is_what_the_server_received(case: str, cli: Any, server: LocalServer, capitals: Path) -> None:
    args, as_text = CASES[case]
    _run(cli, server, capitals / "run", args)
    log = read_run(capitals / "run")
    stats = server.stats()
    n = len(log.samples)
    completions = stats["by_path"].get("/v1/completions", 0)
    assert (completions, chat_requests(server)) == ((n, 0) if as_text else (0, n))
    prompts = [s.prompt for s in log.samples]
    sent = stats["last_body"]["prompt" if as_text else "messages"]
    assert sent in prompts  # byte for byte, the prompt as it went over the wire
    assert all(isinstance(p, str) == as_text for p in prompts)  # a completion has no role
    for described in (log.manifest.provenance.backend.settings, log.manifest.model.settings):
        assert described["chat"] is (not as_text)  # ee87dc3: chat true for a completion


def test_prompt_prints_a_completion_as_the_text_recorded(cli: Any, server: LocalServer, capitals: Path) -> None:
    args, _ = CASES["spec-completion"]
    _run(cli, server, capitals / "run", args)
    first = read_run(capitals / "run").samples[0]
    shown = cli("prompt", "capitals.yaml", "--item", first.item_id, "--json")
    assert shown.code == 0 and json.loads(shown.out)["prompt"] == first.prompt and "messages" not in shown.out
    text = cli("prompt", "capitals.yaml", "--item", first.item_id)
    assert "--- user ---" not in text.out and "--- text" in text.out
    assert text.out.rstrip("\n").endswith(str(first.prompt))
    chat = cli("prompt", "capitals.yaml", "--item", first.item_id, "--format", "chat")
    assert "--- user ---" in chat.out  # a chat request shows its roles


def test_explain_compares_a_completion_as_its_text(cli: Any, server: LocalServer, capitals: Path) -> None:
    """The same messages, sent as chat and as one text: different prompts (ee87dc3: "same prompt")."""
    _run(cli, server, capitals / "chat", CASES["builtin-chat"][0])
    _run(cli, server, capitals / "text", CASES["builtin-completion"][0])
    found = explain_logs(read_run(capitals / "chat"), read_run(capitals / "text"), n_boot=50)
    assert found.prompts_differ == found.n_shared == 4
    assert found.first_prompt is not None and found.first_prompt.offset == 0
    text = read_run(capitals / "text").samples
    assert found.first_prompt.b in {s.prompt for s in text} and not found.first_prompt.b.startswith("[{")


def test_the_report_shows_a_completion_as_text_escaped(cli: Any, server: LocalServer, capitals: Path) -> None:
    rows = (capitals / "capitals" / "test.jsonl").read_text().splitlines()
    row = json.loads(rows[0]) | {"country": "<script>alert(1)</script>"}
    (capitals / "capitals" / "test.jsonl").write_text("\n".join([json.dumps(row), *rows[1:]]) + "\n")
    _run(cli, server, capitals / "run", CASES["spec-completion"][0])
    blob = sample_blob([summarize_run(0, read_run(capitals / "run"))])
    assert all(len(s["p"]) == 1 and s["p"][0][0] == "" for s in blob["samples"])  # one text, no role
    r = cli("report", capitals / "run", "-o", capitals / "r.html")
    assert r.code == 0, r.err
    html = (capitals / "r.html").read_text()
    assert "<script>alert(1)</script>" not in html
