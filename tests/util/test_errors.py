"""proctor.util.errors: located problems, and the one error-rate threshold every command shares."""

from __future__ import annotations

import inspect

import pydantic

from proctor.util.errors import DEFAULT_MAX_ERROR_RATE, InputError, Problem, brief, first_problem


def test_problem_reads_path_line_field_message() -> None:
    assert str(Problem("data.jsonl", 3, "not JSON", "prompt")) == "data.jsonl:3: prompt: not JSON"
    assert str(Problem("data.jsonl", None, "empty")) == "data.jsonl: empty"
    err = InputError([Problem("a.yaml", 1, "x"), Problem("a.yaml", 2, "y")])
    assert str(err) == "a.yaml:1: x\na.yaml:2: y" and err.exit_code == 2
    assert str(InputError.at("b.json", "bad", line=4, field="k")) == "b.json:4: k: bad"


def test_every_command_defaults_to_the_one_max_error_rate() -> None:
    from proctor.cli import llmwc_cmds, run_cmds, score_cmds

    for command in (run_cmds.run, score_cmds.score):
        assert inspect.signature(command).parameters["max_error_rate"].default == DEFAULT_MAX_ERROR_RATE
    assert llmwc_cmds.ConfigRunOptions.__dataclass_fields__["max_error_rate"].default == DEFAULT_MAX_ERROR_RATE


def test_first_problem_is_one_line_with_the_field_and_a_count() -> None:
    class Row(pydantic.BaseModel):
        a: int
        b: int

    try:
        Row.model_validate({"a": "x"})
    except pydantic.ValidationError as e:
        assert first_problem(e) == ("a", "Input should be a valid integer, unable to parse string as an integer", 2)
        assert brief(e) == "a: Input should be a valid integer, unable to parse string as an integer (+1 more)"
    assert first_problem(ValueError("no JSON\nsecond line")) == (None, "no JSON", 1)
    assert brief(ValueError("no JSON\nsecond line")) == "no JSON"
