"""The one table from the library's field names to the command line's flags.

The library names what is wrong by field (`max_tokens: …`, `judge.api_key_env: …`); a command shows the same
error with the flag the user typed (`--max-tokens: …`)."""

from __future__ import annotations

import re

from ..core.options import OPTIONS
from ..util.errors import InputError, Problem, ProctorError

# the run options' flags are the table's (proctor.core.options); the rest are spec paths and `score`'s own flags
FLAGS = {o.name: o.cli_flag for o in OPTIONS if o.cli_flag is not None} | {
    "model": "--model", "scorer.answer_rule": "--answer-rule", "dataset.fewshot_from": "--fewshot-from",
    "judge.api_key_env": "--judge-api-key-env", "norm": "--norm", "softmax_temperature": "--softmax-temperature",
    "join": "--join",
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
