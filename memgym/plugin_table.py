"""Where each of memgym's registered names lives: name -> ``"module:attr"``, per registry.

``import memgym`` declares these tables (:func:`declare_builtins`); a lookup such as
``MEMORIES.get("3dmem")`` then imports ``memgym.memory.embodied.snapshots`` and nothing else. The
module a name points at registers it with the matching decorator (``@register_memory("3dmem")``),
and tests/core/test_registry.py checks that both agree, in both directions. Add a line here when
you register a new class; third-party packages use entry points instead (docs/plugins.md).
"""

from __future__ import annotations

from memgym.core.registry import ALL_REGISTRIES, RECORD_KINDS

_CORES = "memgym.memory.recurrent.core_memory"

BUILTINS: dict[str, dict[str, str]] = {
    "env": {
        "voxmem": "memgym.envs.voxmem_env:VoxMemEnv",
    },
    "memory": {
        "3dmem": "memgym.memory.embodied.snapshots:SnapshotMemory",
        "3dmem+clip": "memgym.memory.embodied.snapshots:ClipLinkedMemory",
        "3dmem+controlled": "memgym.memory.embodied.snapshots:ControlledLinkedMemory",
        "3dmem+dialogue": "memgym.memory.embodied.snapshots:SnapshotDialogueMemory",
        "3dmem+gt_metadata": "memgym.memory.embodied.probes:MetadataProbe",
        "3dmem+linked": "memgym.memory.embodied.snapshots:AnyLinkedMemory",
        "3dmem+oracle_position": "memgym.memory.embodied.probes:OraclePositionProbe",
        "3dmem+oracle_selection": "memgym.memory.embodied.probes:OracleSelectionProbe",
        "3dmem+vlm": "memgym.memory.embodied.snapshots:VLMLinkedMemory",
        "attention": f"{_CORES}:AttentionMemory",
        "attention_rope": f"{_CORES}:AttentionRopeMemory",
        "cascaded": "memgym.memory.voxmem.cascaded:CascadedMemory",
        "conceptgraph": "memgym.memory.embodied.conceptgraph:ConceptGraphMemory",
        "conceptgraph+dialogue": "memgym.memory.embodied.conceptgraph:ConceptGraphDialogueMemory",
        "dialogue": "memgym.memory.embodied.dialogue:DialogueMemory",
        "evidence_only": "memgym.memory.voxmem.probes:EvidenceOnlyMemory",
        "frames": "memgym.memory.embodied.frames:FramesMemory",
        "frames+dialogue": "memgym.memory.embodied.frames:FramesDialogueMemory",
        "full_history": "memgym.memory.voxmem.full_history:FullHistoryMemory",
        "gdn": f"{_CORES}:GdnMemory",
        "gdn2": f"{_CORES}:Gdn2Memory",
        "kda": f"{_CORES}:KdaMemory",
        "mamba2": f"{_CORES}:Mamba2Memory",
        "no_erase": f"{_CORES}:NoEraseMemory",
        "oracle": "memgym.memory.embodied.oracle:OracleProbe",
        "oracle_tags": "memgym.memory.voxmem.probes:OracleTagsMemory",
        "transcript": "memgym.memory.voxmem.transcript:TranscriptMemory",
    },
    "scorer": {
        "attribute_query": "memgym.tasks.attribute_retrieval:AttributeQueryScorer",
        "exact_match": "memgym.tasks.text_match:ExactMatchScorer",
        "llm_match": "memgym.tasks.llm_match:LLMMatchScorer",
        "navigation": "memgym.tasks.navigation:NavigationScorer",
        "token_f1": "memgym.tasks.text_match:TokenF1Scorer",
        "voxmem": "memgym.tasks.voxmem.scoring:VoxMemScorer",
    },
    "scene": {
        "habitat_sim": "memgym.scenes.habitat_sim_adapter:HabitatSimScene",
        "hm3d": "memgym.scenes.hm3d.scene:HM3DScene",
        "procedural": "memgym.scenes.procedural:ProceduralHouse",
    },
    "reasoner": {
        "hf": "memgym.backends.hf:HFReasoner",
        "hf_audio": "memgym.backends.hf_audio:HFAudioReasoner",
        "openai": "memgym.backends.openai_http:OpenAIChatReasoner",
        "structured": "memgym.backends.structured:StructuredReasoner",
    },
    "benchmark": {
        "amemops": "memgym.pipelines.amemops.benchmark:AMemOpsBenchmark",
        "dialogmem": "memgym.pipelines.dialogmem:DialogMemBenchmark",
        "voxmem": "memgym.pipelines.voxmem.benchmark:VoxMemBenchmark",
    },
    "linker": {
        "clip": "memgym.memory.embodied.linking:ClipLinker",
        "controlled": "memgym.memory.embodied.controlled_linker:ControlledLinker",
        "vlm": "memgym.memory.embodied.linking:VLMLinker",
    },
}
"""Registry kind -> {name -> ``"module:attr"``} of memgym's own classes."""

BUILTIN_RECORD_KINDS: dict[str, str] = {
    "amemops.event": "memgym.datasets.amemops.records:StreamEvent",
    "amemops.stream": "memgym.datasets.amemops.records:AMemOpsStream",
    "dialogmem.dialogue_turn": "memgym.datasets.dialogmem.validation:DialogueTurn",
    "dialogmem.episode": "memgym.datasets.dialogmem.episode:DialogMemEpisode",
    "dialogmem.memory_item": "memgym.datasets.dialogmem.content:MemoryItem",
    "dialogmem.observation_log": "memgym.datasets.dialogmem.content:ObservationLog",
    "dialogmem.resident": "memgym.datasets.dialogmem.residents:Resident",
    "dialogmem.segment": "memgym.datasets.dialogmem.content:Segment",
    "dialogmem.turn_spec": "memgym.datasets.dialogmem.policy:TurnSpec",
    "embodied.episode": "memgym.datasets.embodied:EmbodiedEpisode",
    "embodied.frame": "memgym.datasets.traversal:PosedFrame",
    "embodied.observation": "memgym.datasets.traversal:ObjectObservation",
    "embodied.segment": "memgym.datasets.traversal:NavigationSegment",
    "embodied.traversal": "memgym.datasets.traversal:Traversal",
    "episode": "memgym.core.episode:Episode",
    "scene.object": "memgym.scenes.objects:SceneObject",
    "scene.region": "memgym.scenes.objects:Region",
    "scene.relation": "memgym.scenes.objects:Relation",
    "scene.spec": "memgym.scenes.spec:SceneSpec",
    "scene.view_point": "memgym.scenes.objects:ViewPoint",
    "task_item": "memgym.core.episode:TaskItem",
    "tts.style": "memgym.backends.tts.base:SpeechStyle",
    "tts.voice": "memgym.backends.tts.base:Voice",
    "voxmem.episode": "memgym.datasets.voxmem.records:VoxMemEpisode",
    "voxmem.fact": "memgym.datasets.voxmem.records:SessionFact",
    "voxmem.plan": "memgym.datasets.voxmem.records:Plan",
    "voxmem.query": "memgym.datasets.voxmem.records:Query",
    "voxmem.session": "memgym.datasets.voxmem.records:Session",
    "voxmem.session_plan": "memgym.datasets.voxmem.records:SessionPlan",
    "voxmem.turn": "memgym.datasets.voxmem.records:Turn",
}
"""Record kind -> ``"module:attr"`` of its :class:`~memgym.core.records.Record` class."""


def declare_builtins() -> None:
    """Declare every table entry with its registry (idempotent; imports no plugin module)."""
    for registry in ALL_REGISTRIES:
        for name, target in BUILTINS[registry.kind].items():
            registry.declare(name, target)
    RECORD_KINDS.update(BUILTIN_RECORD_KINDS)
