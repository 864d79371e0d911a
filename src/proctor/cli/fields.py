"""The one table from the library's field names to the command line's flags.

The library names what is wrong by field (`max_tokens: …`, `judge.api_key_env: …`); a command shows the same
error with the flag the user typed (`--max-tokens: …`)."""

from __future__ import annotations

import re

from ..util.errors import InputError, Problem, ProctorError

FLAGS = {
    "model": "--model", "mode": "--mode", "prompt": "--prompt", "answer_rule": "--answer-rule", "scorer.answer_rule": "--answer-rule",
    "format": "--format", "shots": "--shots", "fewshot_from": "--fewshot-from", "dataset.fewshot_from": "--fewshot-from",
    "limit": "--limit", "limit_per_category": "--limit-per-category",
    "seed": "--seed", "data_file": "--data-file", "epochs": "--epochs", "temperature": "--temperature",
    "top_p": "--top-p", "max_tokens": "--max-tokens", "stop": "--stop", "gen_seed": "--gen-seed",
    "reasoning_effort": "--reasoning-effort", "thinking_budget": "--thinking-budget", "top_k": "--top-k",
    "min_p": "--min-p", "presence_penalty": "--presence-penalty", "frequency_penalty": "--frequency-penalty",
    "system": "--system", "extra_body": "--extra-body", "truncated_as": "--truncated-as", "extract": "--extract",
    "no_answer": "--no-answer", "judge": "--judge", "judge_base_url": "--judge-base-url",
    "judge_api_key_env": "--judge-api-key-env", "judge.api_key_env": "--judge-api-key-env",
    "judge_agreement": "--judge-agreement", "judge_temperature": "--judge-temperature",
    "judge_max_tokens": "--judge-max-tokens", "prices": "--prices", "price_in": "--price-in",
    "price_out": "--price-out", "max_cost": "--max-cost", "shard": "--shard", "cluster": "--cluster",
    "norm": "--norm", "softmax_temperature": "--softmax-temperature", "join": "--join",
    "baseline": "--baseline", "max_drop": "--max-drop", "stop_when_decided": "--stop-when-decided",
    "exec_limits": "--exec-limits", "test_imports": "--test-imports",
}
_LEADING = re.compile(r"^([a-z_][a-z_.]*)(?=[: ])")
_SNAKE = re.compile(r"\b[a-z]+(?:_[a-z]+)+\b")  # a field name with an underscore: never a word of prose


def flag_for(name: str) -> str:
    """The flag of a field name (the name itself when the command line has no flag for it)."""
    return FLAGS.get(name, name)


def with_flags(error: ProctorError) -> ProctorError:
    """`error` with the field it names shown as its flag."""
    if isinstance(error, InputError):
        return InputError([Problem(flag_for(p.path), p.line, p.message, p.field) for p in error.problems])
    text = str(error)
    match = _LEADING.match(text)
    if match is None or match.group(1) not in FLAGS:
        return error
    rest = _SNAKE.sub(lambda m: FLAGS.get(m.group(0), m.group(0)), text[match.end():])  # `price_in` → `--price-in`
    renamed = ProctorError(FLAGS[match.group(1)] + rest)
    renamed.exit_code = error.exit_code
    return renamed
