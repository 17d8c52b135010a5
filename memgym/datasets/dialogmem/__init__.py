"""DialogMem episodes: residents, memory content per object, dialogue, navigation and QA items.

Pipeline (each stage fixes content before any words are written)::

    scene objects + traversal log
      -> content.py      perceptual / episodic / social memory items (update & correction chains)
      -> turns.py        dialogue turn specifications under the information-selection policy
      -> realise.py      template (default) or LLM realisation into utterances
      -> validation.py   rule checks (+ LLM grounding audit), regenerate then drop
      -> task_specs.py   navigation and QA specs, filters, question/instruction text
      -> episode.py      the ``dialogmem.episode`` record; statistics.py summarises a dataset
"""
