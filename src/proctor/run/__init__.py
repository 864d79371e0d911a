"""Running an evaluation: a RunSpec (`proctor.core.spec`) built from options (`build`), its benchmark's defaults
applied once (`resolve`), planned, resumed and dispatched (`pipeline`), each chunk asked, scored and logged (`runner`,
`chunk`), through the request cache (`cache`, on the SQLite `store`, which also keeps the run history), sharded
(`shard`), sized before it runs (`estimate`), priced and guarded (`pricing`), finished (`finalize`), checked
(`verify`).
"""
