"""The run log, the product of every run: manifest and samples (`runlog`), results (`results`), provenance,
the local store of finished runs (`store`) and the setting that tells two runs apart (`setting`).
"""
