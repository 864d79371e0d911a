"""`hf:<path-or-hub-id>` — a local transformers causal LM (torch/transformers are imported only here).

The package, by job (docs/hf.md):
* `tokens` — tokenisation once per distinct text, and the continuation boundary rule;
* `trie` — the prefix trie, the cost model that decides what to share (`plan`), summing a request's log-prob;
* `scheduler` — plan, then run shared subtrees (`tree`) and whole sequences (`plain`);
* `tree` — shared edges on their parent's key/value cache, siblings packed into rows with a tree mask;
* `plain` — length-sorted, left-padded batches with plain causal attention;
* `engine` — token budget, out-of-memory halving, scores gathered with one device->host transfer;
* `generate` — batched generation; `backend` — the `HFModel` class.
"""

from .backend import HFModel
from .generate import _Job

__all__ = ["HFModel", "_Job"]
