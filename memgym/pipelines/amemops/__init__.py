"""AMemOps jobs: the benchmark's CLI entry (:mod:`.benchmark`), the keys of both jobs
(:mod:`.configs`), streams as tensors (:mod:`.streams`), ``memgym train amemops`` (:mod:`.train`),
``memgym eval amemops`` (:mod:`.evaluate`) and its tables (:mod:`.reports`), presets
(:mod:`.presets`, with ``train=true``: :mod:`.suite`) and state interventions (:mod:`.interventions`)."""
