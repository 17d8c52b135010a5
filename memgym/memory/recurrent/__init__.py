"""Recurrent memory cores for AMemOps: the gated delta-rule family and matched softmax attention.

All variants share one notation (see :mod:`memgym.memory.recurrent.delta_rule`): per head the
state ``S`` ``(d_v, d_k)`` maps keys to values and each frame applies::

    S̄ = S_{t-1} D_t ;  S_t = S̄ - (S̄ (b_t ⊙ k_t)) k_tᵀ + (w_t ⊙ v_t) k_tᵀ ;  o_t = S_t q_t / √d_k

Modules:

* ``delta_rule`` — reference loop, step form and chunked (UT transform) form of the recurrence;
* ``attention`` — causal softmax attention with optional RoPE and a key/value cache;
* ``mixers`` — the memory layers (GDN2, KDA, GDN, no-erase, Mamba-2-style, attention ±RoPE);
* ``model`` — the Table 1 model (two pre-norm blocks, gain and pan classifiers);
* ``intervention`` — key-subspace state edits and their controls;
* ``core_memory`` — the model as a registered memgym ``Memory`` (step form per ``observe``, or
  the chunked form over everything observed);
* ``trainer`` — the resumable, DDP-ready training loop of these models (``TrainConfig``, ``Trainer``).
"""
