"""llm-wc configs are validated like the command line's flags: every bad value is `path:line: key: message`
(issue 22 item 9); model directories never collide and never climb (item 4)."""

from __future__ import annotations

from pathlib import Path

import pytest

from proctor.cli import main
from proctor.interop.llmwc import model_dir, read_config
from proctor.util.errors import InputError

HEAD = "benchmark:\n  name: mmlu_pro\n  seed: 12345\n"


def _config(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "llmwc.yaml"
    path.write_text(text)
    return path


@pytest.mark.parametrize(("text", "where", "message"), [
    (HEAD + "models:\n  - name: m\nrequest_defaults:\n  temperature: hot\n", ":7: request_defaults.temperature",
     "valid number"),
    (HEAD + "models:\n  - name: m\n    request_overrides:\n      stop: 5\n", ":7: models[0].request_overrides.stop",
     "valid string"),
    ("benchmark:\n  name: mmlu_pro\n  seed: [1, 2]\nmodels:\n  - name: m\n", ":3: benchmark.seed", "valid integer"),
    (HEAD + "models:\n  - name: m\n    request_overrides:\n      max_tokens: lots\n",
     ":7: models[0].request_overrides.max_tokens", "valid integer"),
    (HEAD + "models:\n  - name: m\n    request_overrides:\n      max_tokens: -5\n",
     ":7: models[0].request_overrides.max_tokens", "greater than or equal to 1"),
    (HEAD + "models:\n  - name: m\nrequest_defaults:\n  top_p: 7\n", ":7: request_defaults.top_p",
     "less than or equal to 1"),
    (HEAD + "models:\n  - name: m\nrequest_defaults:\n  temperature: true\n", ":7: request_defaults.temperature",
     "not true/false"),
    (HEAD + "models:\n  - name: m\nrequest_defaults:\n  logit_bias: {}\n", ":7: request_defaults.logit_bias",
     "proctor does not send 'logit_bias'"),
    (HEAD + "models:\n  - name: m\n  - name: m\n", ":6: models[1]", "same model as models[0]"),
    (HEAD + "models: []\n", ":4: models", "at least 1 item"),
    ("- just\n- a list\n", ":1: ", "expected an llm-wc config"),
])
def test_bad_config_values_name_their_line_and_key(tmp_path: Path, text: str, where: str, message: str) -> None:
    path = _config(tmp_path, text)
    with pytest.raises(InputError) as e:
        read_config(path)
    assert f"{path}{where}" in str(e.value) and message in str(e.value), str(e.value)


def test_deep_yaml_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _config(tmp_path, HEAD + "models:\n  - name: m\n    request_overrides:\n      stop: " + "[" * 100_000)
    assert main(["run", "--config", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"{path}" in err and "Traceback" not in err and "deep" in err


def test_cli_refuses_a_bad_config_before_running(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _config(tmp_path, HEAD + "  output_dir: " + str(tmp_path / "out") +
                   "\nmodels:\n  - name: m\nrequest_defaults:\n  temperature: hot\n")
    assert main(["run", "--config", str(path)]) == 2
    assert f"{path}:8: request_defaults.temperature:" in capsys.readouterr().err
    assert not list(tmp_path.glob("out*"))


def test_valid_config_keeps_llmwc_forms(tmp_path: Path) -> None:
    path = _config(tmp_path, HEAD + "  limit_subjects: law, business\nmodels:\n  - name: gpt-oss:latest\n"
                   "    request_overrides: {frequency_penalty: 0.0, max_tokens: 64, stop: [x]}\n")
    config = read_config(path)
    assert config.benchmark.subjects() == ["law", "business"]
    assert config.dir_names() == ["gpt-oss_latest"]
    assert config.models[0].request_overrides.given() == {"frequency_penalty": 0.0, "max_tokens": 64, "stop": ["x"]}
    nulls = read_config(_config(tmp_path, HEAD + "models:\n  - name: m\nrequest_defaults: {temperature: null}\n"))
    assert nulls.request_defaults.given() == {}  # null: llm-wc's default stays


def test_model_directories_never_collide_nor_climb(tmp_path: Path) -> None:
    path = _config(tmp_path, HEAD + "models:\n  - name: a b\n  - name: a_b\n  - name: '..'\n  - name: A_B\n"
                   "  - name: x\n    output_name: ../../etc\n")
    names = read_config(path).dir_names()
    assert len(set(names)) == len({n.casefold() for n in names}) == 5
    assert "a_b" in names and all(n and not n.startswith(".") and "/" not in n for n in names)
    assert model_dir("..") not in (".", "..") and model_dir("gpt-oss:latest") == "gpt-oss_latest"


def test_unknown_benchmark_names_the_config(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _config(tmp_path, 'benchmark:\n  name: "mmlu\\e[2J"\nmodels:\n  - name: m\n')
    assert main(["run", "--config", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"{path}: benchmark.name: 'mmlu\\x1b[2J': proctor runs" in err and "\x1b" not in err
