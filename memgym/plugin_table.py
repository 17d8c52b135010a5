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

MEMORY_TABLE: dict[str, tuple[str, str]] = {
    "3dmem": ("memgym.memory.embodied.snapshots:SnapshotMemory", "frames semantic reasoner"),
    "3dmem+clip": ("memgym.memory.embodied.snapshots:ClipLinkedMemory", "frames semantic reasoner dialogue linker"),
    "3dmem+controlled": (
        "memgym.memory.embodied.snapshots:ControlledLinkedMemory",
        "frames semantic reasoner dialogue linker truth",
    ),
    "3dmem+dialogue": ("memgym.memory.embodied.snapshots:SnapshotDialogueMemory", "frames semantic reasoner dialogue"),
    "3dmem+gt_metadata": ("memgym.memory.embodied.probes:MetadataProbe", "frames semantic reasoner dialogue truth"),
    "3dmem+linked": ("memgym.memory.embodied.snapshots:AnyLinkedMemory", "frames semantic reasoner dialogue linker"),
    "3dmem+oracle_position": (
        "memgym.memory.embodied.probes:OraclePositionProbe",
        "frames semantic reasoner dialogue truth",
    ),
    "3dmem+oracle_selection": (
        "memgym.memory.embodied.probes:OracleSelectionProbe",
        "frames semantic reasoner dialogue truth",
    ),
    "3dmem+vlm": ("memgym.memory.embodied.snapshots:VLMLinkedMemory", "frames semantic reasoner dialogue linker"),
    "attention": (f"{_CORES}:AttentionMemory", "audio"),
    "attention_rope": (f"{_CORES}:AttentionRopeMemory", "audio"),
    "cascaded": ("memgym.memory.voxmem.cascaded:CascadedMemory", "audio dialogue"),
    "cascaded_evidence_only": ("memgym.memory.voxmem.probes:CascadedEvidenceOnlyMemory", "audio dialogue truth"),
    "conceptgraph": ("memgym.memory.embodied.conceptgraph:ConceptGraphMemory", "frames semantic reasoner"),
    "conceptgraph+dialogue": (
        "memgym.memory.embodied.conceptgraph:ConceptGraphDialogueMemory",
        "frames semantic reasoner dialogue",
    ),
    "dialogue": ("memgym.memory.embodied.dialogue:DialogueMemory", "dialogue"),
    "evidence_only": ("memgym.memory.voxmem.probes:EvidenceOnlyMemory", "audio dialogue truth"),
    "frames": ("memgym.memory.embodied.frames:FramesMemory", "frames semantic"),
    "frames+dialogue": ("memgym.memory.embodied.frames:FramesDialogueMemory", "frames semantic dialogue"),
    "full_history": ("memgym.memory.voxmem.full_history:FullHistoryMemory", "audio dialogue"),
    "gdn": (f"{_CORES}:GdnMemory", "audio"),
    "gdn2": (f"{_CORES}:Gdn2Memory", "audio"),
    "kda": (f"{_CORES}:KdaMemory", "audio"),
    "mamba2": (f"{_CORES}:Mamba2Memory", "audio"),
    "no_erase": (f"{_CORES}:NoEraseMemory", "audio"),
    "no_history": ("memgym.memory.voxmem.no_history:NoHistoryMemory", "audio dialogue"),
    "oracle": ("memgym.memory.embodied.oracle:OracleProbe", "truth"),
    "oracle_tags": ("memgym.memory.voxmem.probes:OracleTagsMemory", "audio dialogue truth"),
    "transcript": ("memgym.memory.voxmem.transcript:TranscriptMemory", "audio dialogue"),
}
"""Memory name -> (``"module:attr"``, what it reads: words of :data:`memgym.core.protocols.READS`).
The second column equals the class's ``reads`` (tests/core/test_registry.py checks it), so an
evaluation picks the memories it can feed without importing them."""

MEMORY_READS: dict[str, frozenset[str]] = {name: frozenset(reads.split()) for name, (_, reads) in MEMORY_TABLE.items()}
"""Memory name -> what it reads (the second column of :data:`MEMORY_TABLE`)."""

BASES: dict[str, str] = {
    "env": "gymnasium:Env",
    "memory": "memgym.core.protocols:Memory",
    "scorer": "memgym.core.protocols:Scorer",
    "scene": "memgym.core.protocols:Scene",
    "reasoner": "memgym.core.protocols:Reasoner",
    "benchmark": "memgym.core.benchmark:Benchmark",
    "linker": "memgym.memory.embodied.linking:Linker",
}
"""Registry kind -> ``"module:attr"`` of the class everything registered under it subclasses."""

BUILTINS: dict[str, dict[str, str]] = {
    "env": {
        "amemops": "memgym.envs.audio_stream_env:AudioStreamEnv",
        "dialogmem": "memgym.envs.dialogmem_env:DialogMemEnv",
        "voxmem": "memgym.envs.voxmem_env:VoxMemEnv",
    },
    "memory": {name: target for name, (target, _) in MEMORY_TABLE.items()},
    "scorer": {
        "attribute_query": "memgym.tasks.attribute_retrieval:AttributeQueryScorer",
        "exact_match": "memgym.tasks.text_match:ExactMatchScorer",
        "llm_match": "memgym.tasks.llm_match:LLMMatchScorer",
        "navigation": "memgym.tasks.dialogmem.navigation:NavigationScorer",
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
        "structured": "memgym.pipelines.structured_reasoner:StructuredReasoner",
    },
    "benchmark": {
        "amemops": "memgym.pipelines.amemops.benchmark:AMemOpsBenchmark",
        "dialogmem": "memgym.pipelines.dialogmem.benchmark:DialogMemBenchmark",
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

BENCHMARK_INFO: dict[str, dict] = {
    "dialogmem": {
        "title": "DialogMem",
        "env_id": "memgym/DialogMem-v0",
        "gives": frozenset({"frames", "semantic", "dialogue", "reasoner", "linker", "truth"}),
        "eval_jobs": ("eval-dialogmem",),
        "stores_per_memory": True,
        "dataset_file": True,
        "viewer": "memgym.viewer.dialogmem:DialogMemSite",
        "findings_rows": "memgym.pipelines.findings.runs:dialogmem_rows",
        "report": "memgym.pipelines.reporting:DIALOGMEM_RUNS",
        "quickstart": "memgym.pipelines.quickstart.dialogmem:SECTION",
    },
    "voxmem": {
        "title": "VoxMem",
        "env_id": "memgym/VoxMem-v0",
        "gives": frozenset({"audio", "dialogue", "truth"}),
        "eval_jobs": ("eval-voxmem",),
        "viewer": "memgym.viewer.voxmem:VoxMemSite",
        "findings_rows": "memgym.pipelines.findings.runs:voxmem_rows",
        "report": "memgym.pipelines.reporting:VOXMEM_RUNS",
        "quickstart": "memgym.pipelines.quickstart.voxmem:SECTION",
    },
    "amemops": {
        "title": "AMemOps",
        "env_id": "memgym/AMemOps-v0",
        "gives": frozenset({"audio"}),
        "eval_jobs": ("amemops_eval",),
        "viewer": "memgym.viewer.amemops:AMemOpsSite",
        "findings_rows": "memgym.pipelines.findings.runs:amemops_rows",
        "report": "memgym.pipelines.reporting:AMEMOPS_RUNS",
        "quickstart": "memgym.pipelines.quickstart.amemops:SECTION",
    },
}
"""Benchmark name -> the fields of its :class:`~memgym.core.benchmark.BenchmarkInfo` (equal to its
class's ``info``; tests/core/test_registry.py checks it), in report order, so the viewer, findings
and the quickstart find memgym's benchmarks without importing them."""


def declare_builtins() -> None:
    """Declare every table entry with its registry (idempotent; imports no plugin module)."""
    for registry in ALL_REGISTRIES:
        registry.declare_base(BASES[registry.kind])
        for name, target in BUILTINS[registry.kind].items():
            registry.declare(name, target)
    RECORD_KINDS.update(BUILTIN_RECORD_KINDS)
