"""Executing model code: the sandbox (`sandbox.py`), parallel executions (`pool.py`), code taken from replies
(`extract.py`), the scorer of code benchmarks (`scorer.py`)."""
