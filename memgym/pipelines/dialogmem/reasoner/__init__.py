"""DialogMem's reading for the offline ``structured`` reasoner
(:mod:`memgym.pipelines.structured_reasoner`): dialogue into facts (:mod:`.dialogue_reading`,
:mod:`.observation_reading`), the target of a request (:mod:`.target_resolution`, with the asked
key by meaning, :mod:`.key_similarity`) and the answer (:mod:`.answer`)."""
