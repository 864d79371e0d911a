"""The run log's files, read and written: manifest and samples (`runlog`), the prompts' shared heads (`prompts`),
provenance, the sample index, the sequential record, checksums, and the setting that tells two runs apart
(`setting`). Nothing here computes results: that is `proctor.metrics`'s.
"""
