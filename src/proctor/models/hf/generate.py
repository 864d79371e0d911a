"""Generation: requests grouped by settings, sorted by prompt length, run `batch_size` at a time (docs/hf.md).

Prompts are left-padded by hand with an attention mask (generate derives position ids from it). Stop strings and
EOS are applied per row; sampling draws each row from its own seeded `torch.Generator`, so a seeded request gives
the same text in any batch. A batch that raises is halved until only the failing request is an error record.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import torch
from jinja2 import TemplateError
from transformers import LogitsProcessor, LogitsProcessorList, StoppingCriteria, StoppingCriteriaList
from transformers.generation.logits_process import TopPLogitsWarper

from ...core.model import (
    GenerateRequest,
    Generation,
    GenerationSpec,
    SentPrompt,
    chat_messages,
    completion_text,
)
from ...util import progress
from .tool_calls import CallFormat, offers_tools, read_calls, template_messages, template_tools


@dataclass
class _Job:
    index: int  # position in the caller's request list
    prompt: list[int]
    seed: int | None = None


class GenerationMixin:
    """Batched `generate` for a backend with `model`, `tokenizer`, `device`, `batch_size`, `max_length`, `encode`."""

    model: Any
    tokenizer: Any
    device: torch.device
    batch_size: int
    max_length: int
    _eos_ids: set[int]
    call_format: CallFormat | None = None  # the chat template's tool-call format (tool_calls.call_format)

    def encode(self, text: str) -> list[int]:
        raise NotImplementedError

    def generate_sync(self, requests: Sequence[GenerateRequest]) -> list[Generation]:
        """Generate for every request, batched (see the module docstring); results are in request order."""
        out: list[Generation | None] = [None] * len(requests)
        groups: dict[tuple[GenerationSpec, int], list[_Job]] = {}
        for i, req in enumerate(requests):
            try:
                prompt = self.render(req)
            except (ValueError, TypeError, KeyError, TemplateError) as e:
                out[i] = Generation(error=f"cannot render the prompt: {type(e).__name__}: {e}")
                continue
            budget = self.max_length - len(prompt)
            if budget <= 0:
                out[i] = Generation(error=f"prompt has {len(prompt)} tokens; max_length is {self.max_length}")
                continue
            s = req.settings
            max_new = budget if s.max_tokens is None else min(s.max_tokens, budget)
            if max_new <= 0:
                out[i] = Generation(text="", finish_reason="length", input_tokens=len(prompt), output_tokens=0)
                continue
            # the seed is per row (each row samples from its own generator), so it does not split batches
            groups.setdefault((s.model_copy(update={"seed": None}), max_new), []).append(_Job(i, prompt, s.seed))
        for (settings, max_new), jobs in groups.items():
            jobs.sort(key=lambda j: len(j.prompt))
            for lo in range(0, len(jobs), self.batch_size):
                batch = jobs[lo : lo + self.batch_size]
                generated = self._run_batch(batch, settings, max_new)
                for job, gen in zip(batch, generated):
                    out[job.index] = gen
                progress.report(requests=len(batch), tokens=sum(g.output_tokens or 0 for g in generated))
        return [self._read_calls(g, r) if g is not None else Generation(error="not generated")
                for g, r in zip(out, requests)]

    def _read_calls(self, g: Generation, req: GenerateRequest) -> Generation:
        """A reply to a request with tools: its call blocks as calls, the text outside them as its text."""
        if g.error is not None or self.call_format is None or not offers_tools(req.tools, req.tool_choice):
            return g
        text, calls = read_calls(g.text, self.call_format)
        return replace(g, text=text, tool_calls=calls) if calls else g

    def sent_prompt(self, req: GenerateRequest) -> SentPrompt:
        """A completion request's text as it is (lm-eval's prompt without a chat template); else the messages,
        through the chat template when the tokenizer has one, else their contents joined by newlines (a text)."""
        if req.completion:
            return completion_text(req)
        if getattr(self.tokenizer, "chat_template", None):
            return chat_messages(req.messages)
        return "\n".join(m.content for m in req.messages)

    def render(self, req: GenerateRequest) -> list[int]:
        """The prompt tokens of what `sent_prompt` says is sent: a text's own, or the chat template's."""
        prompt = self.sent_prompt(req)
        tooled = bool(req.tools) or any(m.tool_calls or m.tool_call_id is not None for m in req.messages)
        if tooled and (isinstance(prompt, str) or self.call_format is None):
            raise ValueError("tools are offered through a chat template that takes them and writes calls in a "
                             "format proctor reads (Hermes <tool_call>); this prompt has none")
        if isinstance(prompt, str):
            return self.encode(prompt)
        if tooled:
            tools = template_tools(req.tools) if offers_tools(req.tools, req.tool_choice) else None
            text = self.tokenizer.apply_chat_template(template_messages(req.messages), tools=tools, tokenize=False,
                                                      add_generation_prompt=True)
        else:
            text = self.tokenizer.apply_chat_template(prompt, tokenize=False, add_generation_prompt=True)
        return list(self.tokenizer(text, add_special_tokens=False)["input_ids"])

    def _run_batch(self, jobs: list[_Job], settings: GenerationSpec, max_new: int) -> list[Generation]:
        """One batch; when it fails, its halves are retried so only the failing request becomes an error."""
        t0 = time.perf_counter()
        try:
            rows, stop_steps = self._generate_batch(jobs, settings, max_new)
        except (RuntimeError, ValueError, IndexError) as e:  # includes CUDA out-of-memory
            if self.device.type == "cuda":
                torch.cuda.empty_cache()
            if len(jobs) == 1:
                return [Generation(error=f"{type(e).__name__}: {e}", latency_s=time.perf_counter() - t0)]
            half = len(jobs) // 2
            return self._run_batch(jobs[:half], settings, max_new) + self._run_batch(jobs[half:], settings, max_new)
        wall = time.perf_counter() - t0
        return [self._finish(j, new, step, settings, wall) for j, new, step in zip(jobs, rows, stop_steps)]

    def _generate_batch(
        self, jobs: list[_Job], settings: GenerationSpec, max_new: int
    ) -> tuple[list[list[int]], list[int | None]]:
        """Left-padded `model.generate`: each row's new tokens, and the step a stop string appeared at."""
        width = max(len(j.prompt) for j in jobs)
        pad = self._pad_id()
        ids = torch.full((len(jobs), width), pad if pad is not None else 0, dtype=torch.long)
        mask = torch.zeros((len(jobs), width), dtype=torch.long)
        for r, j in enumerate(jobs):
            ids[r, width - len(j.prompt) :] = torch.tensor(j.prompt)
            mask[r, width - len(j.prompt) :] = 1
        stopper = _StopOnStrings(self.tokenizer, list(settings.stop), width, len(jobs))
        processors = LogitsProcessorList()
        if settings.temperature:  # None (no temperature given) is greedy, as 0
            processors.append(_Sampler(settings, [self._generator(j.seed) for j in jobs]))
        kwargs: dict[str, Any] = {}
        if self._eos_ids:
            kwargs["eos_token_id"] = sorted(self._eos_ids)
        with torch.inference_mode():
            out = self.model.generate(
                input_ids=ids.to(self.device),
                attention_mask=mask.to(self.device),  # generate derives position ids from it
                max_new_tokens=max_new,
                do_sample=False,  # sampling, when asked for, is done by _Sampler with per-request generators
                temperature=None,
                top_p=None,
                top_k=None,
                logits_processor=processors,
                stopping_criteria=StoppingCriteriaList([stopper]),
                pad_token_id=pad,
                **kwargs,
            )
        return out[:, width:].tolist(), stopper.steps

    def _generator(self, seed: int | None) -> torch.Generator:
        """A generator of its own for one request: seeded ones repeat whatever batch they are in."""
        if seed is None:
            seed = int(torch.randint(0, 2**62, (1,)))
        return torch.Generator(device=self.device).manual_seed(seed)

    def _finish(
        self, job: _Job, new: list[int], stop_step: int | None, settings: GenerationSpec, wall: float
    ) -> Generation:
        """Cut a row at its first EOS or the step its stop string appeared, then the text at the earliest stop."""
        keep, finish = len(new), "length"
        eos_at = next((k for k, t in enumerate(new) if t in self._eos_ids), None)
        if eos_at is not None:
            keep, finish = eos_at + 1, "stop"
        if stop_step is not None and stop_step < keep:
            keep, finish = stop_step, "stop"
        tokens = new[:keep]
        if tokens and tokens[-1] in self._eos_ids:
            tokens = tokens[:-1]
        text = str(self.tokenizer.decode(tokens, skip_special_tokens=True))
        cuts = [text.index(x) for x in settings.stop if x and x in text]
        if cuts:
            text, finish = text[: min(cuts)], "stop"
        return Generation(
            text=text, finish_reason=finish, input_tokens=len(job.prompt), output_tokens=keep, latency_s=wall
        )

    def _eos_token_ids(self) -> set[int]:
        """The tokenizer's EOS and every EOS of the model's generation config (chat models often add some)."""
        ids: set[int] = set()
        cfg = getattr(self.model, "generation_config", None)
        for source in (self.tokenizer.eos_token_id, getattr(cfg, "eos_token_id", None)):
            if isinstance(source, int):
                ids.add(source)
            elif isinstance(source, (list, tuple)):
                ids.update(int(t) for t in source)
        return ids

    def _pad_id(self) -> int | None:
        pad = self.tokenizer.pad_token_id
        if pad is None:
            pad = self.tokenizer.eos_token_id
        return None if pad is None else int(pad)


class _StopOnStrings(StoppingCriteria):
    """Stop each row once its new text contains a stop string; `steps[r]` is the number of new tokens then.

    Only the last `4 * longest stop + 16` new tokens are decoded each step (a character takes at most four
    byte-level tokens), so a step costs the same however long the output is."""

    def __init__(self, tokenizer: Any, stops: list[str], prompt_len: int, rows: int) -> None:
        self.tokenizer, self.stops, self.prompt_len = tokenizer, [s for s in stops if s], prompt_len
        self.window = 4 * max((len(s) for s in self.stops), default=0) + 16
        self.steps: list[int | None] = [None] * rows

    def __call__(self, input_ids: torch.Tensor, scores: torch.Tensor, **kwargs: Any) -> torch.Tensor:
        done = torch.zeros(input_ids.shape[0], dtype=torch.bool, device=input_ids.device)
        if not self.stops:
            return done
        n = input_ids.shape[1] - self.prompt_len
        tail = input_ids[:, self.prompt_len + max(0, n - self.window) :].tolist()
        for r, row in enumerate(tail):
            if self.steps[r] is None:
                text = self.tokenizer.decode(row, skip_special_tokens=True)
                if any(s in text for s in self.stops):
                    self.steps[r] = n
            done[r] = self.steps[r] is not None
        return done


class _Sampler(LogitsProcessor):
    """Temperature and top-p, then one draw per row from that row's own generator, as a one-hot score row.

    HF's own sampling draws from the global RNG for the whole batch, so a request's sample would depend on
    its batch; here each request's draws come from its own `torch.Generator`, so a seeded request gives the
    same tokens alone or in any batch (greedy decoding of the one-hot row picks the drawn token)."""

    def __init__(self, settings: GenerationSpec, generators: list[torch.Generator]) -> None:
        self.temperature, self.top_p, self.generators = settings.temperature or 1.0, settings.top_p, generators

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
        logits = scores.float() / self.temperature
        if self.top_p is not None and self.top_p < 1.0:
            logits = TopPLogitsWarper(self.top_p)(input_ids, logits)
        probs = torch.softmax(logits, dim=-1)
        picks = torch.stack([torch.multinomial(probs[r], 1, generator=g) for r, g in enumerate(self.generators)])
        return torch.full_like(scores, float("-inf")).scatter_(1, picks, 0.0)  # type: ignore[return-value]
