"""The backend registry: one entry per scheme, typed options, clear errors for a bad spec or option."""

from __future__ import annotations

from pathlib import Path

import pytest

from proctor.models.registry import BACKENDS, SCHEMES, backend_for, get_model, parse_options
from proctor.models.scripted import ScriptedModel
from proctor.util.errors import ProctorError


def test_every_scheme_is_one_registry_entry() -> None:
    assert SCHEMES == tuple(BACKENDS) == ("hf", "openai", "anthropic", "vllm", "scripted")
    backend, rest = backend_for("openai:org/model:v2")
    assert (backend.prefix, rest) == ("openai", "org/model:v2")  # only the first colon splits


@pytest.mark.parametrize(("spec", "message"), [
    ("gpt2", "must look like SCHEME:NAME, with SCHEME one of hf, openai"),
    ("hf:", "must look like SCHEME:NAME"),
    ("sglang:m", "unknown model scheme 'sglang' in 'sglang:m' (expected one of hf, openai"),
])
def test_a_bad_spec_is_a_clear_error(spec: str, message: str) -> None:
    with pytest.raises(ProctorError, match=message.replace("(", r"\(")):
        backend_for(spec)


def test_options_are_validated_by_the_backends_model() -> None:
    openai = BACKENDS["openai"]
    assert parse_options(openai, {"concurrency": 4, "timeout": None}) == {"concurrency": 4}  # unset: the default
    with pytest.raises(ProctorError, match=r"openai: models take no option 'dtype' \(they take: .*concurrency"):
        parse_options(openai, {"dtype": "float16"})
    with pytest.raises(ProctorError, match=r"openai: option 'concurrency': .*greater than or equal to 1 \(got 0\)"):
        parse_options(openai, {"concurrency": 0})
    with pytest.raises(ProctorError, match="scripted: models take no option 'seed' \\(they take: none\\)"):
        parse_options(BACKENDS["scripted"], {"seed": 1})


def test_get_model_builds_only_the_backend_asked_for() -> None:
    model = get_model("scripted:random,seed=7")
    assert isinstance(model, ScriptedModel) and model.name == "scripted:random,seed=7" and model.seed == 7
    with pytest.raises(ProctorError, match="vllm: models take no option 'batch'"):
        get_model("vllm:m", batch=True)


@pytest.mark.parametrize("arg", ["--foo 'bar", '--x "unclosed', "--y \\"])
def test_an_engine_arg_that_is_not_shell_quoted_is_one_line(arg: str, tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 32 #17: `--engine-arg "--foo 'bar"` raised shlex's ValueError as a traceback."""
    from proctor.cli import main

    items = Path(__file__).resolve().parents[2] / "examples" / "items" / "multiple-choice.jsonl"
    capsys.readouterr()
    code = main(["run", str(items), "--model", "vllm:org/m", "--engine-arg", arg, "-o", str(tmp_path / "r"),
                 "--no-history", "--no-progress"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1 and "engine" in err and "quot" in err.lower(), err
    assert not (tmp_path / "r").exists()
