"""`scripted:<rule>` — an instant, deterministic model for demos, tests and benchmarks.

Rules:
- `first`            always the first option: "The answer is (A)" (or `\\boxed{0}` for boxed-answer prompts);
- `random`           a pseudo-random option chosen from a hash of the prompt (and `seed=N`, default 0);
- `echo`             the last user message, verbatim;
- `fixed=TEXT`       always TEXT;
- `file=PATH.jsonl`  lines `{"prompt_hash": H, "answer": A}` or `{"prompt": P, "answer": A}`, where H is
                     `prompt_hash(messages)` and P the last user message; a prompt not in the file is an error.

Options combine with commas: `scripted:random,seed=3`; `delay=SECONDS` answers one request at a time, each after
that many seconds, handed over by the runner one item at a time (a slow model, for trying executors and
interruptions). Multiple-choice letters are read from the prompt ("(C)", "C." or "C)" at a line start); without
them A-D are assumed. Log-likelihoods are pseudo-random but exact functions of the text, split into word tokens (`\\s*\\S+`), so
logprob runs can be demoed without torch and the local test server's completions endpoint returns the very
same numbers.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
import string
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..core.model import (
    Capability,
    GenerateRequest,
    Generation,
    Loglikelihood,
    LoglikelihoodRequest,
    Message,
    ModelBase,
)
from ..util.errors import InputError, Problem, ProctorError
from ..util.textio import iter_jsonl
from ._echo import TokenLogprob, continuation_score

_OPTION = re.compile(r"^\s*\(?([A-Z])[).:]\s", re.MULTILINE)
_TOKEN = re.compile(r"\s*\S+|\s+$")
# the rule registry: each rule as written, and what it answers (`python -m proctor.testing --help` prints it)
RULES: dict[str, str] = {
    "first": 'always the first option: "The answer is (A)" (or \\boxed{0} for boxed-answer prompts)',
    "random": "a pseudo-random option chosen from a hash of the prompt (and seed=N)",
    "echo": "the last user message, verbatim",
    "fixed=TEXT": "always TEXT",
    "file=PATH.jsonl": 'lines {"prompt_hash": H, "answer": A} or {"prompt": P, "answer": A}; a prompt not in it is an error',
}
# options that combine with a rule, after a comma (`random,seed=3`)
RULE_OPTIONS: dict[str, str] = {
    "seed=N": "the seed of the random rule (default 0)",
    "delay=SECONDS": "answer one request at a time, each after that many seconds (a slow model)",
}
_RULES = tuple(form.partition("=")[0] for form in RULES)


def _digest(*parts: str) -> int:
    return int.from_bytes(hashlib.sha256("\x1f".join(parts).encode()).digest()[:8], "big")


def prompt_hash(messages: Sequence[Message] | Sequence[dict[str, str]]) -> str:
    """A stable 16-hex-digit hash of a conversation (roles and contents), as used by `file=` rules."""
    rows = [m if isinstance(m, dict) else {"role": m.role, "content": m.content} for m in messages]
    canon = json.dumps([[r["role"], r["content"]] for r in rows], ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canon.encode()).hexdigest()[:16]


def option_letters(prompt: str) -> list[str]:
    """The option letters a prompt offers, in order (A-D when none are found)."""
    found: list[str] = []
    for m in _OPTION.finditer(prompt):
        if m.group(1) not in found:
            found.append(m.group(1))
    letters = [c for c in string.ascii_uppercase if c in found]
    # Keep a contiguous run from A only, so stray "I." sentences do not add options.
    run = [c for i, c in enumerate(letters) if c == string.ascii_uppercase[i]]
    return run if len(run) >= 2 else list("ABCD")


def _is_boxed(prompt: str) -> bool:
    return "\\boxed" in prompt


def pseudo_logprobs(text: str) -> list[TokenLogprob]:
    """Deterministic per-token log-probs of `text`: each depends only on the text before it and the token."""
    out: list[TokenLogprob] = []
    for m in _TOKEN.finditer(text):
        tok, start = m.group(0), m.start()
        if not out:
            out.append(TokenLogprob(tok, start, None, tok, None))
            continue
        h = _digest(text[:start], tok)
        lp = -0.05 - (h % 6000) / 1000.0
        greedy = (h >> 20) % 3 == 0
        top_tok, top_lp = (tok, lp) if greedy else (" <alt>", lp / 3.0)
        out.append(TokenLogprob(tok, start, lp, top_tok, top_lp))
    return out


class ScriptedModel(ModelBase):
    """Answers by rule, instantly; see the module docstring for the rules."""

    capabilities = frozenset({Capability.GENERATE, Capability.LOGLIKELIHOOD})
    text_completion = True

    def __init__(self, rule: str = "first") -> None:
        self.name = f"scripted:{rule}"
        self.rule, self.seed, self.text, self.delay = "first", 0, "", 0.0
        self.answers: dict[str, str] = {}
        self._gate: tuple[asyncio.AbstractEventLoop, asyncio.Lock] | None = None
        for part in rule.split(","):
            key, _sep, value = part.partition("=")
            key = key.strip()
            if key == "seed":
                try:
                    self.seed = int(value)
                except ValueError:
                    raise ProctorError(f"{self.name}: seed must be an integer, got {value!r}") from None
            elif key == "delay":
                self.delay = _seconds(self.name, value)
            elif key in _RULES:
                self.rule = key
                if key == "fixed":
                    self.text = value
                elif key == "file":
                    self.answers = _load_answers(Path(value))
            else:
                raise ProctorError(f"unknown scripted rule {key!r} in {self.name!r}; expected one of {', '.join(_RULES)}")
        if self.delay:  # a slow model's answers are kept one by one, as a remote backend's are
            self.preferred_chunk_size = 1

    def respond(self, messages: Sequence[Message]) -> str:
        """The scripted answer to a conversation; raises KeyError for a `file=` rule that lacks it."""
        prompt = next((m.content for m in reversed(messages) if m.role == "user"), "")
        if self.rule == "echo":
            return prompt
        if self.rule == "fixed":
            return self.text
        if self.rule == "file":
            for key in (prompt_hash(messages), prompt):
                if key in self.answers:
                    return self.answers[key]
            raise KeyError(f"no scripted answer for prompt hash {prompt_hash(messages)}")
        pick = 0 if self.rule == "first" else _digest(str(self.seed), prompt)
        if _is_boxed(prompt):
            return f"Reasoning omitted.\n\\boxed{{{pick % 1000}}}"
        letters = option_letters(prompt)
        return f"The answer is ({letters[pick % len(letters)]})"

    async def generate(self, requests: Sequence[GenerateRequest]) -> list[Generation]:
        out: list[Generation] = []
        for r in requests:
            if self.delay:
                await self._slowly()
            try:
                text = self.respond(r.messages)
            except KeyError as e:
                out.append(Generation(error=str(e.args[0]), latency_s=0.0))
                continue
            n_in = sum(len(m.content.split()) for m in r.messages)
            out.append(Generation(text=text, finish_reason="stop", input_tokens=n_in,
                                  output_tokens=len(text.split()), latency_s=0.0))
        return out

    async def _slowly(self) -> None:
        """Wait `delay` seconds, one request at a time (concurrent calls queue): a model that answers slowly."""
        loop = asyncio.get_running_loop()
        if self._gate is None or self._gate[0] is not loop:  # a lock belongs to one event loop
            self._gate = (loop, asyncio.Lock())
        async with self._gate[1]:
            await asyncio.sleep(self.delay)

    async def loglikelihood(self, requests: Sequence[LoglikelihoodRequest]) -> list[Loglikelihood]:
        return [continuation_score(r.context, r.continuation, pseudo_logprobs(r.context + r.continuation))
                for r in requests]

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "rule": self.rule, "seed": self.seed}


def _seconds(name: str, value: str) -> float:
    """`delay=SECONDS`: a number from 0 to 3600."""
    try:
        seconds = float(value)
    except ValueError:
        seconds = -1.0
    if not 0.0 <= seconds <= 3600.0:  # NaN fails both comparisons
        raise ProctorError(f"{name}: delay must be a number of seconds from 0 to 3600, got {value!r}")
    return seconds


def _load_answers(path: Path) -> dict[str, str]:
    problems: list[Problem] = []
    answers: dict[str, str] = {}
    for line, row in iter_jsonl(path, problems):
        if not isinstance(row, dict):
            problems.append(Problem(str(path), line, "expected a JSON object"))
            continue
        key = row.get("prompt_hash", row.get("prompt"))
        if not isinstance(key, str):
            problems.append(Problem(str(path), line, "needs a string 'prompt_hash' or 'prompt'", "prompt_hash"))
        elif not isinstance(row.get("answer"), str):
            problems.append(Problem(str(path), line, "must be a string", "answer"))
        else:
            answers[key] = row["answer"]
    if problems:
        raise InputError(problems)
    return answers
