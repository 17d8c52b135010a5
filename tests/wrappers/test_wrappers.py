"""memgym.wrappers: each wrapper's one job, checked on the real envs, and formation_action()
reachable through any stack of them."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest
from gymnasium import spaces

from memgym.backends.asr import ASRConfig
from memgym.core.errors import MemgymError
from memgym.datasets.speech.turn_features import log_mel_frames
from memgym.datasets.voxmem.audio_files import turn_audio
from memgym.datasets.voxmem.build import VoxMemBuilder
from memgym.datasets.voxmem.config import VoxMemConfig
from memgym.wrappers import (
    AnswerChoices,
    AudioFeatures,
    EmbedText,
    FlattenAction,
    FlattenObservation,
    HashTokenizer,
    PadAudio,
    TokenizeText,
    sb3_ready,
)


@pytest.fixture(scope="module")
def vox_folder(tmp_path_factory):
    config = VoxMemConfig(
        items=1, cells=("sound/IE",), budgets=("3k",), asr=ASRConfig(kind="none"), out=str(tmp_path_factory.mktemp("v"))
    )
    return VoxMemBuilder(config).build()


def _voxmem(folder) -> gymnasium.Env:
    return gymnasium.make("memgym/VoxMem-v0", dataset=str(folder))


def _formation(env: gymnasium.Env, seed: int = 0):
    """Every formation observation of one episode (formation actions through the whole stack)."""
    obs, info = env.reset(seed=seed)
    seen = []
    while info["phase"] == "formation":
        seen.append(obs)
        obs, _, _, _, info = env.step(env.get_wrapper_attr("formation_action")())
    return seen, obs


def test_tokenizer_is_deterministic_and_bounded():
    tokenizer = HashTokenizer(vocab_size=50, max_tokens=5)
    ids = tokenizer.encode("Alice: the KEYS are on the shelf, 2 of them")
    assert ids.tolist() == tokenizer.encode("alice : the keys are on the shelf").tolist()
    assert ids.shape == (5,) and ids.min() >= 1 and ids.max() <= 49  # cut to 5 tokens, 0 only pads
    assert tokenizer.encode("").tolist() == [0] * 5
    assert len({int(i) for i in HashTokenizer(4096).encode("one two three four five six")} - {0}) == 6
    with pytest.raises(MemgymError, match="vocab_size >= 2"):
        HashTokenizer(vocab_size=1)


def test_text_keys_become_token_ids_and_vectors(vox_folder):
    tokens = TokenizeText(_voxmem(vox_folder), max_tokens=16)
    assert isinstance(tokens.observation_space["text"], spaces.Box)
    assert isinstance(tokens.observation_space["timestamp"], spaces.Box)
    assert isinstance(tokens.observation_space["audio"], spaces.Sequence)  # only Text keys change
    seen, question = _formation(tokens)
    assert all(tokens.observation_space.contains(o) for o in seen + [question])
    assert question["text"].tolist() == tokens.tokenizer.encode(tokens.unwrapped.episode.items[0].prompt).tolist()
    only = TokenizeText(_voxmem(vox_folder), keys=["text"])
    assert isinstance(only.observation_space["timestamp"], spaces.Text)
    with pytest.raises(MemgymError, match=r"keys \['role'\] are not Text keys"):
        TokenizeText(_voxmem(vox_folder), keys=["role"])

    def encoder(texts):  # not normalised, as a sentence encoder might return
        return np.array([[len(t), 3.0, -4.0] for t in texts])

    vectors = EmbedText(_voxmem(vox_folder), encoder=encoder)
    assert vectors.observation_space["text"] == spaces.Box(-1, 1, (3,), np.float32)
    seen, question = _formation(vectors)
    assert all(vectors.observation_space.contains(o) for o in seen + [question])
    assert abs(np.linalg.norm(question["text"]) - 1) < 1e-6


def test_audio_features_and_padding_read_the_turn(vox_folder):
    raw_seen, _ = _formation(_voxmem(vox_folder))
    features = AudioFeatures(_voxmem(vox_folder))
    features_seen, question = _formation(features)
    assert all(features.observation_space.contains(o) for o in features_seen + [question])
    for raw, obs in zip(raw_seen, features_seen, strict=True):
        length = int(raw["audio_length"][0])
        if not length:
            assert not obs["audio"].any()
            continue
        mel, _ = log_mel_frames(turn_audio(raw["audio"], length))
        assert np.allclose(obs["audio"][:40], mel.mean(axis=0), atol=1e-4)
        assert obs["audio"][-1] == pytest.approx(length / 16000)
    padded = PadAudio(_voxmem(vox_folder))
    assert padded.observation_space["audio"].shape == (480_000,)
    seen, _ = _formation(padded)
    for raw, obs in zip(raw_seen, seen, strict=True):
        length = int(raw["audio_length"][0])
        assert (obs["audio"][:length] == turn_audio(raw["audio"], length)).all() and not obs["audio"][length:].any()
    pooled_from_padded, _ = _formation(AudioFeatures(padded))
    assert all(np.allclose(a["audio"], b["audio"]) for a, b in zip(pooled_from_padded, features_seen, strict=True))


def test_answer_choices_and_flat_actions_map_to_env_actions(vox_folder):
    choices = AnswerChoices(_voxmem(vox_folder), ["seven", "I can't tell"])
    assert choices.action_space == spaces.Discrete(2) and choices.action(1) == "I can't tell"
    dialog_space = spaces.Dict({"text": spaces.Text(20), "position": spaces.Box(-5, 5, (3,), np.float32)})
    env = _ActionSpace(dialog_space)
    picked = AnswerChoices(env, ["yes", "no", "maybe"])
    assert picked.action_space["text"] == spaces.Discrete(3)
    flat = FlattenAction(picked)
    assert flat.action_space.shape == (6,) and flat.action_space.dtype == np.float32
    action = flat.action(np.array([1, -9, 2, 0.1, -0.3, 0.7], np.float32))
    assert action["text"] == 2 and action["position"].tolist() == [1.0, -5.0, 2.0]  # clipped to the Box
    assert picked.action(action)["text"] == "maybe" and env.action_space.contains(picked.action(action))
    with pytest.raises(MemgymError, match="at least one answer"):
        AnswerChoices(_voxmem(vox_folder), [])
    with pytest.raises(MemgymError, match="entry 'x' is Text"):
        FlattenAction(_ActionSpace(spaces.Dict({"x": spaces.Text(5)})))
    with pytest.raises(MemgymError, match="needs a Dict action space"):
        FlattenAction(choices)


class _ActionSpace(gymnasium.Env):
    """An env with only an action space (for the action wrappers' mapping)."""

    observation_space = spaces.Box(0, 1, (1,))

    def __init__(self, action_space: spaces.Space) -> None:
        self.action_space = action_space


def test_flatten_observation_is_float32_and_refuses_text(vox_folder):
    flat = FlattenObservation(AudioFeatures(TokenizeText(_voxmem(vox_folder))))
    seen, question = _formation(flat)
    assert flat.observation_space.dtype == np.float32 and seen[0].dtype == np.float32
    assert all(flat.observation_space.contains(o) for o in seen + [question])
    with pytest.raises(MemgymError, match=r"keys \['audio', 'text', 'timestamp'\] are not arrays"):
        FlattenObservation(_voxmem(vox_folder))


def test_formation_action_is_reachable_through_every_stack(vox_folder):
    stack = sb3_ready(_voxmem(vox_folder), ["a", "b"], flatten=True)
    names = []
    layer = stack
    while isinstance(layer, gymnasium.Wrapper):
        names.append(type(layer).__name__)
        layer = layer.env
    assert names[:4] == ["FlattenObservation", "AnswerChoices", "AudioFeatures", "TokenizeText"]
    assert stack.formation_action() == 0 and stack.action_space.contains(stack.formation_action())
    outer = gymnasium.wrappers.RecordEpisodeStatistics(stack)  # a Gymnasium wrapper on top
    assert outer.get_wrapper_attr("formation_action")() == 0
    observation_only = TokenizeText(_voxmem(vox_folder))  # forwards to the env's own
    assert observation_only.formation_action() == ""
    amemops = sb3_ready(gymnasium.make("memgym/AMemOps-v0", library="tones"))
    assert amemops.get_wrapper_attr("formation_action")().tolist() == [0, 0]


def test_sb3_ready_with_embeddings_passes_sb3_check_env(vox_folder):
    checker = pytest.importorskip("stable_baselines3.common.env_checker")
    env = sb3_ready(_voxmem(vox_folder), ["a"], text="embedding")
    assert env.observation_space["text"] == spaces.Box(-1, 1, (256,), np.float32)
    checker.check_env(env, warn=False)
