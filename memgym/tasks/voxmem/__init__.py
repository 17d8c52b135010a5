"""VoxMem scoring: reading replies (:mod:`.answers`), the scorer and judge (:mod:`.scoring`),
result tables (:mod:`.tables`) and the paper's analyses (:mod:`.analyses`)."""
