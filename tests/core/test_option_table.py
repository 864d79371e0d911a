"""The run options' table (`proctor.core.options`) is the one declaration: `proctor run`'s flags, `proctor.eval`'s
typed keywords, the `--config` refusals and docs/runspec.md's option table agree with it, and each option's identity
cells are what `RunSpec.run_id()` does when the option is turned both ways (#47 item 2)."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path
from typing import Any

import pytest
import typer.main

from proctor.api import EvalKeywords
from proctor.cli import _register, app, llmwc_cmds, options_gen
from proctor.cli.fields import FLAGS
from proctor.cli.run_options import cli_default
from proctor.core.keywords import BackendKeywords, RunKeywords
from proctor.core.options import APPLIED, BY_NAME, OPTIONS, SPEC_FIELDS, EvalOptions, Opt, no_such_option
from proctor.core.spec import RunSpec
from proctor.run.build import build_spec, eval_options
from proctor.util.errors import ProctorError

ROOT = Path(__file__).parents[2]
DOC = ROOT / "docs" / "runspec.md"
ITEMS = str(ROOT / "examples" / "items" / "multiple-choice.jsonl")
# options that only mean something beside others: both sides of the turn get these
_BESIDE: dict[str, dict[str, Any]] = {
    "baseline": {"stop_when_decided": True, "max_drop": 5.0, "baseline": "runs/a"},
    "max_drop": {"stop_when_decided": True, "max_drop": 1.0, "baseline": "runs/a"},
    "price_in": {"price_in": "3", "price_out": "4"}, "price_out": {"price_in": "3", "price_out": "4"},
    **{name: {"judge": "scripted:last"} for name in ("judge_base_url", "judge_api_key_env", "judge_temperature",
                                                      "judge_max_tokens", "judge_agreement")},
}
_TURNED: dict[str, dict[str, Any]] = {"stop_when_decided": {"baseline": "runs/a", "max_drop": 5.0}}


def _run_command() -> Any:
    _register()
    return typer.main.get_command(app).commands["run"]  # type: ignore[attr-defined]


def test_the_records_are_the_table() -> None:
    assert list(EvalOptions.model_fields) == [o.name for o in OPTIONS]
    plain = EvalOptions()
    for o in OPTIONS:
        assert getattr(plain, o.name) == o.default, o.name
        assert o.example is not None and o.example != o.default, o.name
        assert o.run_id in ("yes", "items", "no") and o.default_from and o.help.strip(), o.name
    assert set(SPEC_FIELDS) == set(BY_NAME)  # every option says which RunSpec field it sets


def test_the_command_line_flags_are_the_table() -> None:
    params = {p.name: p for p in _run_command().params}
    for o in OPTIONS:
        if o.cli_flag is None:
            assert o.name not in params, o.name
            continue
        param = params[o.name]
        assert o.cli_flag.split("/")[0] in param.opts, o.name
        assert param.default == cli_default(o) or (param.default in ((), []) and cli_default(o) is None), o.name
        assert o.help.rstrip(".")[:30] in (param.help or ""), o.name
        assert FLAGS[o.name] == o.cli_flag  # errors name the flag the table gives


def test_the_python_keywords_are_the_table_and_the_backends() -> None:
    assert list(RunKeywords.__annotations__) == [o.name for o in OPTIONS]
    assert not set(BackendKeywords.__annotations__) & set(BY_NAME)
    assert set(inspect.signature(__import__("proctor").eval).parameters) == {"dataset", "model", "options"}
    assert {"out", "runs_root", "store"} <= set(EvalKeywords.__annotations__)


def test_generated_keywords_and_doc_table_are_up_to_date() -> None:
    assert options_gen.KEYWORDS.read_text(encoding="utf-8") == options_gen.keywords_source(), \
        "run python -m proctor.cli.options_gen"
    text = DOC.read_text(encoding="utf-8")
    assert options_gen.doc_text(text) == text, "run python -m proctor.cli.options_gen"
    assert text.count(options_gen.BEGIN) == 1 and options_gen.doc_table() in text


def test_the_config_refusals_are_the_table() -> None:
    for o in OPTIONS:
        if o.config == APPLIED:
            assert o.name in llmwc_cmds.APPLIED_WITH_CONFIG
        else:
            assert o.name not in llmwc_cmds.APPLIED_WITH_CONFIG
        if o.config not in ("", APPLIED):
            assert llmwc_cmds._INSTEAD[o.name] == o.config


def test_a_typo_is_an_error_with_the_nearest_option() -> None:
    with pytest.raises(ProctorError, match=r"^tempreature: no such option \(did you mean temperature\?\)$"):
        eval_options(tempreature=0.5)
    import proctor

    with pytest.raises(ProctorError, match=r"^max_tokns: no such option \(did you mean max_tokens\?\)$"):
        proctor.eval(ITEMS, "scripted:first", max_tokns=5)  # type: ignore[call-arg]
    assert no_such_option("zzzz", BY_NAME) == "zzzz: no such option"


def _spec(given: dict[str, Any]) -> RunSpec:
    return build_spec(ITEMS, "scripted:first", eval_options(**given))


def _with_items(spec: RunSpec) -> RunSpec:
    """`spec` as resolve leaves it for the same items: the data known by its content hash."""
    return spec.model_copy(update={"dataset": spec.dataset.model_copy(update={"content_hash": "same items"})})


@pytest.mark.parametrize("option", OPTIONS, ids=[o.name for o in OPTIONS])
def test_each_option_turned_both_ways_changes_the_run_id_as_the_table_says(
        option: Opt, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    prices = tmp_path / "prices.yaml"
    prices.write_text("currency: USD\nmodels:\n  scripted:first:\n    input: 1\n    output: 2\n")
    monkeypatch.setenv("PROCTOR_PRICES", str(tmp_path / "none.yaml"))
    example = str(prices) if option.name == "prices" else option.example
    base = dict(_BESIDE.get(option.name, {}))
    turned = {**base, **_TURNED.get(option.name, {}), option.name: example}
    one, other = _spec(base), _spec(turned)
    assert one != other, option.name  # the option is honoured: it changes the spec
    changed = one.run_id() != other.run_id()
    same_items = _with_items(one).run_id() != _with_items(other).run_id()
    assert (changed, same_items) == {"yes": (True, True), "items": (True, False), "no": (False, False)}[
        option.run_id], option.name


def _doc_rows() -> dict[str, list[str]]:
    rows = {}
    for line in DOC.read_text(encoding="utf-8").splitlines():
        if line.startswith("| `"):
            cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
            rows[cells[0].strip("`")] = cells[2:5]
    return rows


def test_each_options_label_and_comparability_are_its_fields() -> None:
    """The field's row (checked against the code by tests/core/test_runspec_doc.py) says the same."""
    rows = _doc_rows()
    for o in OPTIONS:
        run_id, label, comparable = rows[str(o.field)]
        assert run_id.startswith({"yes": "yes", "items": "no (through `content_hash`)", "no": "no"}[o.run_id]), o.name
        assert (label == "yes", comparable == "yes") == (o.label, o.comparable), o.name


def test_run_takes_few_parameters_and_no_locals_sweep() -> None:
    tree = ast.parse((ROOT / "src" / "proctor" / "cli" / "run_cmds.py").read_text(encoding="utf-8"))
    (run,) = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == "run"]
    assert len(run.args.args) + len(run.args.kwonlyargs) <= 8
    assert "locals()" not in ast.unparse(tree)


@pytest.mark.parametrize("option", [o for o in OPTIONS if o.honoured.startswith("generate mode")],
                         ids=lambda o: o.name)
def test_a_generate_only_option_is_refused_by_the_one_check_in_logprob_mode(option: Opt) -> None:
    from types import SimpleNamespace

    from proctor.run.honoured import check_honoured
    from proctor.util.errors import InputError

    task = SimpleNamespace(name="t", scorer=None, prompts=SimpleNamespace(logprob_kinds=(), logprob_kind=None))
    spec = _spec({"mode": "logprob", option.name: option.example})
    with pytest.raises(InputError) as refused:
        check_honoured(spec, task)  # type: ignore[arg-type]
    assert refused.value.problems[0].path == option.name
