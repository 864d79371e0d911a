"""CachedModel: answers every request already made from the SQLite store; only misses reach the model.

Keys come from `proctor.run.store.request_key` over the backend's declared `identity()` (never its URLs,
keys or concurrency), the request kind and the full request with its generation settings. Errored responses are
never stored, so a re-run retries exactly those. An answer from the store comes back marked `cached`: each sample
counts them (`Sample.cached_requests`), so `proctor agree` can say when a run repeats another's answers.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

from ..core.model import (
    GenerateRequest,
    Generation,
    Loglikelihood,
    LoglikelihoodRequest,
    Model,
    ModelWrapper,
)
from .store import Store, request_key

_Req = TypeVar("_Req", GenerateRequest, LoglikelihoodRequest)
_Resp = TypeVar("_Resp", Generation, Loglikelihood)


class CachedModel(ModelWrapper):
    """Wraps any Model; same protocol, same results, fewer calls."""

    def __init__(self, inner: Model, store: Store) -> None:
        super().__init__(inner)
        self.store = store
        self._identity = inner.identity()
        self.hits = 0
        self.misses = 0

    def identity(self) -> dict[str, Any]:
        return self._identity

    async def _through_cache(
        self, requests: Sequence[_Req], call: Callable[[list[_Req]], Awaitable[list[_Resp]]]
    ) -> list[_Resp]:
        keys = [request_key(self._identity, r) for r in requests]
        found = self.store.get_many(keys)
        missing = [i for i, k in enumerate(keys) if k not in found]
        self.hits += len(requests) - len(missing)
        self.misses += len(missing)
        out: list[Any] = [dataclasses.replace(found[k], cached=True) if k in found else None for k in keys]
        if missing:
            first = {keys[i]: i for i in reversed(missing)}  # a request repeated in one batch is asked once
            unique = sorted(first.values())
            fresh = dict(zip((keys[i] for i in unique), await call([requests[i] for i in unique]), strict=True))
            for i in missing:
                out[i] = fresh[keys[i]]
            self.store.put_many(fresh.items())
        return out

    async def generate(self, requests: Sequence[GenerateRequest]) -> list[Generation]:
        return await self._through_cache(requests, self.inner.generate)

    async def loglikelihood(self, requests: Sequence[LoglikelihoodRequest]) -> list[Loglikelihood]:
        return await self._through_cache(requests, self.inner.loglikelihood)
