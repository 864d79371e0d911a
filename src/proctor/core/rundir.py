"""Names of run-directory files that packages on different layers know (the run log's own files, manifest.json,
samples.jsonl and results.json, are named by `proctor.log.runlog`)."""

# provider batches already submitted (paid for): written by the batch backends (`proctor.models.batch`); a run
# directory holding it is never removed with a failed run (`proctor.run.lock`)
PAID_STATE = "batches.json"
