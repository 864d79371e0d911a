"""The importer tests' fixtures: tests/import_sources.py (shared with tests/cli/test_import_cmds.py)."""

from import_sources import inspect_eval, items_file, lmeval_gen_results, lmeval_results, lmeval_root

__all__ = ["inspect_eval", "items_file", "lmeval_gen_results", "lmeval_results", "lmeval_root"]
