"""VoxMem jobs: the benchmark's CLI entry (:mod:`.benchmark`), ``memgym eval voxmem``
(:mod:`.evaluation`), its models and recognisers (:mod:`.models`) and the length-or-competition
comparison (:mod:`.length`)."""
