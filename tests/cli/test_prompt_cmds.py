"""`proctor prompt`: the exact request a run would send, as text or JSON; bad item or kind: exit 2."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from proctor.cli import main

UP = Path(__file__).parents[1] / "fixtures" / "upstream"
MMLU = UP / "mmlu_pro" / "test-00000-of-00001.parquet"


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["prompt", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_json_request_has_roles_stop_and_settings(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "mmlu-pro", "--data-file", str(MMLU), "--item", "100", "--prompt", "tiger-local",
                       "--json")
    assert code == 0
    request: dict[str, Any] = json.loads(out)
    assert request["item"] == "mmlu-pro.100" and request["prompt_kind"] == "tiger-local"
    (message,) = request["messages"]
    assert message["role"] == "user" and message["content"].endswith("Answer: Let's think step by step.")
    assert message["content"].count("Question:\n") == 6  # five shots and the question
    assert request["settings"]["stop"] == ["Question:"] and request["settings"]["max_tokens"] == 2048
    assert request["template_hash"].startswith("sha256:")


def test_user_settings_win_and_add_to_the_kinds_stop(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "mmlu-pro", "--data-file", str(MMLU), "--item", "mmlu-pro.100", "--prompt",
                       "tiger-local", "--json", "--max-tokens", "99", "--stop", "\n\n\n")
    settings = json.loads(out)["settings"]
    assert code == 0 and settings["max_tokens"] == 99 and settings["stop"] == ["\n\n\n", "Question:"]


def test_text_output_prints_the_message_verbatim(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "aime-2025", "--data-file", str(UP / "aime_2025" / "train.jsonl"), "--item", "1")
    assert code == 0
    assert "--- user ---\nPlease reason step by step, and put your final answer within \\boxed{}.\n" in out
    assert '"max_tokens": 32768' in out


@pytest.mark.parametrize(("args", "message"), [
    (("--item", "nope"), "mmlu-pro has no item 'nope'"),
    (("--item", "100", "--prompt", "ten_shot"), "mmlu-pro offers prompts five_shot, tiger-api, tiger-local"),
])
def test_unknown_item_or_kind_is_a_clear_error(capsys: pytest.CaptureFixture[str], args: tuple[str, ...],
                                               message: str) -> None:
    code, out, err = run(capsys, "mmlu-pro", "--data-file", str(MMLU), *args)
    assert code == 2 and out == "" and message in err and "Traceback" not in err


def test_tokenizer_fits_tiger_local_shots_to_the_prompt_budget(capsys: pytest.CaptureFixture[str],
                                                               tiny_model_dir: Path, tmp_path: Path) -> None:
    """With the model's tokenizer, shots are dropped until the prompt counts fewer than 2048 tokens."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    long_cot = "A: Let's think step by step. " + "word " * 100 + "The answer is (A)."
    val = [{"question_id": i, "question": f"Example {i}?", "options": ["x", "y"], "answer": "A", "answer_index": 0,
            "cot_content": long_cot, "category": "math", "src": "s"} for i in range(5)]
    test = [{**val[0], "question_id": 99, "question": "Asked?", "cot_content": ""}]
    for name, rows in (("test.parquet", test), ("validation.parquet", val)):
        pq.write_table(pa.Table.from_pylist(rows), tmp_path / name)
    args = ("mmlu-pro", "--data-file", str(tmp_path), "--item", "99", "--prompt", "tiger-local", "--json")
    _, without, _ = run(capsys, *args)
    code, fitted, err = run(capsys, *args, "--tokenizer", str(tiny_model_dir))
    assert code == 0, err
    shots = [json.loads(out)["messages"][0]["content"].count("Question:\n") - 1 for out in (without, fitted)]
    assert shots[0] == 5 and 0 < shots[1] < 5  # the tiny tokenizer: ~500 tokens a shot, so fewer than five fit under 2048


HOSTILE_TEXT = "Pick \x1b]8;;http://evil.example\x07click\x1b]8;;\x07 \x1b[2J one \u202eeno\u202c.\x07"


@pytest.mark.parametrize("as_json", [False, True])
def test_terminal_control_sequences_from_item_text_are_escaped(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                               as_json: bool) -> None:
    """Issue 32 #25: OSC-8 links, BEL, a clear-screen and U+202E from an item were printed raw."""
    items = tmp_path / "items.jsonl"
    items.write_text(json.dumps({"identifier": "t.1", "modality": "choiceof2", "prompt": HOSTILE_TEXT,
                                 "response": "A", "choices": {"A": "one\x1b[31m", "B": "two"}}) + "\n")
    code, out, err = run(capsys, str(items), "--item", "t.1", *(["--json"] if as_json else []))
    assert code == 0, err
    for raw in ("\x1b", "\x07", "\u202e", "\u202c"):
        assert raw not in out, repr(out)
    if as_json:  # still JSON, and the text reads back exactly
        (message,) = [m for m in json.loads(out)["messages"] if "Pick" in m["content"]]
        assert HOSTILE_TEXT in message["content"]
    else:
        assert "\\x1b]8;;http://evil.example\\x07" in out and "\\u202e" in out and "\n" in out


@pytest.mark.parametrize(("args", "option"), [
    (("--max-tokens", "-5"), "--max-tokens"), (("--max-tokens", "0"), "--max-tokens"),
    (("--temperature", "nan"), "--temperature"), (("--temperature", "-1"), "--temperature"),
    (("--top-p", "7"), "--top-p"), (("--top-p", "nan"), "--top-p"), (("--prompt", ""), "--prompt"),
    (("--shots", "-1"), "--shots"),  # the spec's range (ScorerSpec.shots), no longer typer's copy
])
def test_settings_are_checked_as_run_checks_them(capsys: pytest.CaptureFixture[str], args: tuple[str, ...],
                                                 option: str) -> None:
    """Issue 32 #25: `prompt` accepted what `run` refuses; `--prompt ''` silently meant the default kind."""
    code, out, err = run(capsys, "mmlu-pro", "--data-file", str(MMLU), "--item", "100", *args)
    assert code == 2 and out == "" and option in err and len(err.strip().splitlines()) == 1, err
