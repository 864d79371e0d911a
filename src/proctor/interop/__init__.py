"""Other tools' files, each tool's importer and exporter side by side: lm-evaluation-harness (`lmeval_import`),
Inspect (`inspect_import`, `inspect_export`), llm-wc (`llmwc`, `llmwc_config`, `llmwc_export`), probsem
(`probsem_export`), Every Eval Ever (`eee_export`); the registries `importers` and `exporters`.
"""
