"""Config hashes key generated data and run folders: the config layer must keep them identical.

The hashes below were computed before configs were read through pydantic (memgym.core.convert);
a change to how values are converted (int vs float, tuple vs list, nested defaults) shows here.
"""

import pytest

from memgym.core.config import CONFIG_DIR, load_config
from memgym.core.seeding import config_hash
from memgym.datasets.amemops.stream_set import StreamSetConfig
from memgym.datasets.voxmem.config import VoxMemConfig
from memgym.pipelines.amemops.configs import AMemOpsEvalConfig, AMemOpsTrainConfig
from memgym.pipelines.dialogmem.eval_config import DialogMemEvalConfig
from memgym.pipelines.dialogmem.generation import DialogMemGenerateConfig, episode_digest
from memgym.pipelines.voxmem.evaluation import VoxMemEvalConfig

PINNED = [
    (StreamSetConfig, None, (), "58ba77246f583388"),
    (AMemOpsTrainConfig, None, (), "a8631b0253a526d0"),
    # issue 37 (construction.verbalised_share, construction.dialogue_navigation_share, the grammar
    # realiser) changed every generated DialogMem dataset: d3699f81ac4a1b46 before; then
    # construction.max_sighting_gap (issue 37 item 4, times_seen words) 52ff0e4b4dc911aa -> 7f79fc5ee7038db8,
    # its episodes still drawn from 52ff0e4b4dc911aa (test_episode_draws_leave_the_sighting_gap_out)
    (DialogMemGenerateConfig, None, (), "7f79fc5ee7038db8"),
    (DialogMemGenerateConfig, None, ("construction.max_sighting_gap=0",), "c6d242d72d46275b"),
    # the 4-7-room default (4f6ba5a008486d4a before issue 37, 2148f68798869f63 before max_sighting_gap)
    (DialogMemGenerateConfig, None, ("house.min_rooms=4", "house.max_rooms=7"), "a8d737332ddde796"),
    # the dialogue memory's run store (memory=NAME is what a store records; memory's default was
    # "dialogue" until issue 41 item 2, when memory= and memories= were folded once)
    (DialogMemEvalConfig, None, ("memory=dialogue",), "baf0848c987aa2ee"),
    # refusal_scope=every_subtype and max_revisions=8 by default since issue 38 (was 3627af73b1e8a7e9); the
    # default build draws the items that refusal_scope=every_subtype drew before (draw_digest 1b6178d6bcbafd89);
    # lead_silence_s=0.5 by default since issue 38 item 4 (was 4c153e2fd40ee5f9; draws unchanged, see test below),
    # the gate's asr.beam_size=5 since session 14 (was d4360e3aa03761ea; draws unchanged)
    (VoxMemConfig, None, (), "e0f904fb708fea2a"),
    (VoxMemEvalConfig, None, (), "78e847ad68aa3f97"),
    (StreamSetConfig, "amemops_streams.yaml", (), "58ba77246f583388"),
    (StreamSetConfig, "amemops_history.yaml", (), "439c9a89826288a3"),
    (AMemOpsTrainConfig, "amemops_symbolic.yaml", ("model=gdn2", "seed=1"), "ba613ec41731608d"),
    (AMemOpsEvalConfig, "amemops_symbolic_eval.yaml", (), "827639fc44542c91"),
    (AMemOpsEvalConfig, "amemops_width_control.yaml", (), "68c47e1b157464d9"),
    (
        AMemOpsTrainConfig,
        None,
        ("model=kda", "arch.width=512", "data.stream.offset_seconds=[2,60]", "data.block_frames=24", "steps=100"),
        "8987ac51754af247",
    ),
    # 6c5cf9aceed9e7c9 before construction.max_sighting_gap
    (DialogMemGenerateConfig, None, ("scenes=2", "house.min_rooms=3", "house.max_rooms=7"), "a87e98bc3a06269b"),
    (
        DialogMemEvalConfig,
        None,
        ("memory=dialogue", "camera.width=64", "reasoner.backend=structured"),  # memories= is not hashed
        "3be2c3b9c58a3a10",
    ),
    (
        VoxMemConfig,
        None,
        ("items=5", "budgets=[8k]", "max_revisions=6", "seed=3"),
        "ca30d85503d253f5",
    ),  # issue 38; beams 5 (session 14)
    (
        StreamSetConfig,
        None,
        ("count=48", "kind=history", "stream.split=eval", "stream.distractors=[4]"),
        "f731864794bf0bb1",
    ),
]


@pytest.mark.parametrize(("cls", "yaml_file", "overrides", "digest"), PINNED)
def test_config_hashes_are_unchanged(cls, yaml_file, overrides, digest):
    path = CONFIG_DIR / yaml_file if yaml_file else None
    assert config_hash(load_config(cls, path=path, overrides=overrides)) == digest


@pytest.mark.parametrize(
    ("overrides", "digest"),
    [
        ((), "52ff0e4b4dc911aa"),
        (("construction.max_sighting_gap=0",), "52ff0e4b4dc911aa"),
        (("construction.max_sighting_gap=3", "house.min_rooms=4", "house.max_rooms=7"), "2148f68798869f63"),
    ],
)
def test_episode_draws_leave_the_sighting_gap_out(overrides, digest):
    """The sighting gap changes which times_seen words a dataset holds, not its draws: episodes are
    drawn from the hash the config had before the field existed, whatever the gap."""
    assert episode_digest(load_config(DialogMemGenerateConfig, overrides=overrides)) == digest


@pytest.mark.parametrize("override", ["lead_silence_s=0", "lead_silence_s=0.5", "lead_silence_s=1", "asr.beam_size=1"])
def test_voxmem_draws_leave_the_lead_silence_and_the_gates_beams_out(override):
    """The silence before each turn changes how turns sound and the gate's beam width what it hears,
    not which items are drawn: the default build draws what it drew before either existed."""
    from memgym.datasets.voxmem.config import draw_digest

    assert draw_digest(load_config(VoxMemConfig, overrides=(override,))) == "1b6178d6bcbafd89"
