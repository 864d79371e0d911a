"""Running an evaluation: a RunSpec (`spec`) built from options (`build`), its benchmark's defaults applied once
(`resolve`), planned, resumed and dispatched (`pipeline`), each chunk asked, scored and logged (`runner`, `chunk`),
through the request cache (`cache`), sharded (`shard`), sized before it runs (`estimate`), priced (`pricing`), finished
(`finalize`).
"""
