"""The prefix trie of the requests' input sequences, the cost model that decides what to share, and scoring.

Every request's input (its scoring sequence without the last token) is put in a token trie. Sharing an edge
(forwarding it once and running its children on its key/value cache) saves `len(edge) * (uses - 1)` tokens,
where `uses` is the number of distinct inputs through it; it costs a level of forward passes with custom masks
(no fast causal kernels), a cache slice per child and a row per child. `plan` keeps the edges whose saving beats
that cost (`costs`: (`CHILD_COST` tokens per row the edge would feed once unshared edges below it are merged, `NODE_COST`
per edge) on a GPU; on the CPU every saved token pays, `CPU_COSTS`) and merges every other edge into the edges below
it, so an input with no worthwhile shared prefix becomes one whole sequence for the plain batched forward.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ...core.model import Loglikelihood
from .tokens import Prepared

CHILD_COST = 16  # tokens: what one child row of a shared edge costs (cache slice, tree mask, no fast kernel)
NODE_COST = 32  # tokens: what one more shared edge costs (another level of forward passes)
GPU_COSTS = (CHILD_COST, NODE_COST)
CPU_COSTS = (0, 0)  # measured: on the CPU every token saved pays (tiny llama, bench_lmeval workloads)


@dataclass
class Node:
    """A trie edge: `tokens` follow the parent's sequence; requests score positions along the path."""

    tokens: list[int]
    start: int  # absolute position of tokens[0]
    children: dict[tuple[int, ...], Node] = field(default_factory=dict)
    # filled by the forward pass: logprob/greedy of the next in-edge token at each position but the last,
    # and of each possible next token after the last position
    inner: list[tuple[float, bool]] = field(default_factory=list)
    after: dict[int, tuple[float, bool]] = field(default_factory=dict)
    final_targets: set[int] = field(default_factory=set)  # tokens that end some request right after this node
    need_from: int | None = None  # first absolute position whose logits some request needs
    ends: int = 0  # distinct inputs ending exactly here (analysis trie)

    @property
    def end(self) -> int:
        return self.start + len(self.tokens)

    def next_tokens(self) -> set[int]:
        """The tokens whose log-probs after this edge's last position are needed."""
        return {c.tokens[0] for c in self.children.values()} | self.final_targets


def insert(roots: dict[tuple[int, ...], Node], seq: list[int]) -> None:
    """Add `seq` to the trie (children keyed by first token), splitting an edge where `seq` leaves or ends in it."""
    children, pos, node = roots, 0, None
    while pos < len(seq):
        node = children.get((seq[pos],))
        if node is None:
            node = children[(seq[pos],)] = Node(tokens=seq[pos:], start=pos)
            break
        k = 0
        while k < len(node.tokens) and pos + k < len(seq) and node.tokens[k] == seq[pos + k]:
            k += 1
        if k < len(node.tokens):  # head keeps [start, start + k), the tail takes the rest
            tail = Node(tokens=node.tokens[k:], start=node.start + k, children=node.children)
            node.tokens, node.children = node.tokens[:k], {(tail.tokens[0],): tail}
        pos = node.end
        children = node.children
    if node is not None:
        node.ends += 1


def uses(node: Node, memo: dict[int, int]) -> int:
    """Distinct inputs that pass through `node` (memoised by id)."""
    if id(node) not in memo:
        memo[id(node)] = node.ends + sum(uses(c, memo) for c in node.children.values())
    return memo[id(node)]


class CostModel:
    """Decides, bottom-up, which analysis-trie edges are worth sharing (memoised per node)."""

    def __init__(self, costs: tuple[int, int]) -> None:
        self.child_cost, self.node_cost = costs
        self.uses: dict[int, int] = {}
        self.shared: dict[int, bool] = {}

    def worth_sharing(self, node: Node) -> bool:
        """Tokens saved by forwarding the edge once beat the cost of the rows it would feed."""
        if id(node) not in self.shared:
            n = uses(node, self.uses)
            self.shared[id(node)] = bool(node.children) and n > 1 and (
                len(node.tokens) * (n - 1) >= self.child_cost * self.rows_below(node) + self.node_cost)
        return self.shared[id(node)]

    def rows_below(self, node: Node) -> int:
        """The edges that would run on `node`'s cache: a shared child is one, an unshared one merges downwards."""
        return sum(self._through(c) for c in node.children.values())

    def _through(self, node: Node) -> int:
        if self.worth_sharing(node):
            return 1
        return (1 if node.ends else 0) + self.rows_below(node)


def plan(
    inputs: list[list[int]], share: bool, costs: tuple[int, int] = GPU_COSTS
) -> tuple[dict[tuple[int, ...], Node], dict[tuple[int, ...], list[Node]], int]:
    """The forest to forward, each distinct input's path in it, and the analysis trie's token count.

    With `share`, each input is cut after every edge of its trie path that is worth sharing; the pieces are the
    forest's edges (identical pieces under the same parent are one edge). Without, each input is one edge."""
    analysis: dict[tuple[int, ...], Node] = {}
    if share:
        for seq in inputs:
            insert(analysis, seq)
    if share and costs == (0, 0):  # every edge with children is shared: the trie is the forest (one build)
        return analysis, {tuple(seq): walk(analysis, seq) for seq in inputs}, sum(count(n) for n in analysis.values())
    model = CostModel(costs)
    forest: dict[tuple[int, ...], Node] = {}
    paths: dict[tuple[int, ...], list[Node]] = {}
    for seq in inputs:
        cuts = [n.end for n in walk(analysis, seq) if model.worth_sharing(n)] if share else []
        path, children, lo = [], forest, 0
        for hi in [*[c for c in cuts if c < len(seq)], len(seq)]:
            key = tuple(seq[lo:hi])
            node = children.get(key)
            if node is None:
                node = children[key] = Node(tokens=seq[lo:hi], start=lo)
            path.append(node)
            children, lo = node.children, hi
        paths[tuple(seq)] = path
    unique = sum(count(n) for n in analysis.values()) if share else sum(len(s) for s in inputs)
    return forest, paths, unique


def walk(roots: dict[tuple[int, ...], Node], seq: list[int]) -> list[Node]:
    """The nodes along `seq`'s path in a finished analysis trie (`seq` ends exactly at a node's end)."""
    path, children, pos = [], roots, 0
    while pos < len(seq):
        node = children[(seq[pos],)]
        path.append(node)
        pos, children = node.end, node.children
    return path


def mark(path: list[Node], need_from: int) -> None:
    """Record that positions >= `need_from` along `path` need logits."""
    for n in path:
        if n.end > need_from:
            first = max(need_from, n.start)
            n.need_from = first if n.need_from is None else min(n.need_from, first)


def count(node: Node) -> int:
    """Tokens in `node`'s subtree."""
    return len(node.tokens) + sum(count(c) for c in node.children.values())


def collect(path: list[Node], prep: Prepared) -> Loglikelihood:
    """Sum the continuation's log-probs along a scored path; greedy when every token was the argmax."""
    total, greedy, n = 0.0, True, 0
    for node in path:
        for j in range(len(node.tokens)):
            a = node.start + j  # position whose logits predict seq[a + 1]
            if a + 1 < prep.cont_start:
                continue
            lp, g = node.inner[j] if j < len(node.tokens) - 1 else node.after[prep.seq[a + 1]]
            total += lp
            greedy = greedy and g
            n += 1
    return Loglikelihood(logprob=total, n_tokens=n, is_greedy=greedy)
