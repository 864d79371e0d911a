"""MATH-500's two references, reply by reply: lighteval 0.10.0's own `math_500` metric against math-verify (what
proctor's default `math-verify` rule calls), on `bench/math_replies.py`'s replies.

lighteval 0.10.0's task `math_500` grades with `Metrics.math_pass_at_1_1n`: the gold is the dataset's `solution`
column (a worked solution ending in `\\boxed{answer}`), both sides read by lighteval's own extraction
(`extract_target_from_pred`, expression then LaTeX targets) and compared by its `compare_gold_target`. proctor's
default grades against the `answer` column with math-verify 0.9.0 (`verify(parse(\\boxed{answer}), parse(reply))`),
as open-r1 and lighteval >= 0.11 do. Here each invented gold is given to lighteval as a one-line solution ending
in its box (`... so the answer is $\\boxed{gold}$.`).

lighteval is not installed with proctor (it pins a serving stack); fetch its wheel without dependencies and the two
small packages its metric modules import, then point `--lighteval` at the unpacked wheel:

    pip download --no-deps lighteval==0.10.0 -d /tmp/lv && unzip -q /tmp/lv/lighteval-0.10.0-py3-none-any.whl -d /tmp/lv/src
    pip install --target /tmp/lv/deps pycountry aenum
    PYTHONPATH=src python bench/compare_lighteval_math500.py --lighteval /tmp/lv/src --deps /tmp/lv/deps

Only lighteval's metric modules are loaded (its package `__init__`s, which import the whole harness, are
bypassed). Nothing here is run by the tests.
"""

from __future__ import annotations

import argparse
import logging
import sys
import types
import warnings
from collections.abc import Callable
from pathlib import Path

from compare_math_verify import proctor_correct
from math_replies import replies

SOLUTION = "Working through the problem, so the answer is $\\boxed{{{gold}}}$."


def lighteval_metric(root: Path, deps: Path | None) -> Callable[..., float]:
    """lighteval 0.10.0's `math_pass@1:1_samples` sample function, loaded from the unpacked wheel at `root`."""
    if deps is not None:
        sys.path.insert(0, str(deps))
    sys.path.insert(0, str(root))
    for name in ("lighteval", "lighteval.metrics", "lighteval.tasks", "lighteval.utils"):
        package = types.ModuleType(name)
        package.__path__ = [str(root / name.replace(".", "/"))]
        sys.modules[name] = package
    from lighteval.metrics.metrics import Metrics  # type: ignore[import-not-found]

    fn: Callable[..., float] = Metrics.math_pass_at_1_1n.value.sample_level_fn
    return fn


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--lighteval", type=Path, required=True, help="the unpacked lighteval 0.10.0 wheel")
    parser.add_argument("--deps", type=Path, help="where pycountry and aenum were installed (--target)")
    args = parser.parse_args(argv)
    logging.disable(logging.WARNING)
    warnings.simplefilter("ignore")
    metric = lighteval_metric(args.lighteval, args.deps)
    n = same = lv_ok = mine_ok = lv_meant = mine_meant = 0
    differ: list[str] = []
    for label, gold, reply, meant in replies():
        lv = metric(golds=[SOLUTION.format(gold=gold)], predictions=[reply]) == 1.0
        mine = proctor_correct(gold, reply)
        n += 1
        same += lv == mine
        lv_ok += lv
        mine_ok += mine
        lv_meant += lv == meant
        mine_meant += mine == meant
        if lv != mine:
            differ.append(f"{gold!r} {label!r}: lighteval {lv}, proctor {mine} (meant {meant})")
    print("lighteval 0.10.0 math_500 (solution column, its own extraction) vs proctor's math-verify rule")
    print("| replies | same verdict | lighteval correct | proctor correct | lighteval = intent | proctor = intent |")
    print("|---|---|---|---|---|---|")
    print(f"| {n} | {same}/{n} | {lv_ok} | {mine_ok} | {lv_meant}/{n} | {mine_meant}/{n} |")
    for line in differ:
        print("differs:", line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
