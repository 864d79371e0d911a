"""Metrics as plugins: each metric is one module with a `Metric` (name, what it needs, compute → typed value).

`proctor.metrics.results.summarize` runs every registered metric over a run's samples; the built-ins (accuracy and its
breakdowns, macro accuracy, calibration, mean@k/pass@k, acc_norm, judge agreement, cost, text overlap) are
registered first, in `builtin.BUILTIN`. A new metric is one module that defines it and calls `register`; its
value appears in results.json (`metrics.<name>`), the console summary and the report.
"""

from .base import Metric, MetricOutput, RunContext
from .registry import compute_metrics, register, registered, unregister

__all__ = ["Metric", "MetricOutput", "RunContext", "compute_metrics", "register", "registered", "unregister"]
