"""Loss and candidate scoring of the assembled audio LM on clips whose encoder prefix is cached.

Only the last ``train_layers`` encoder layers, the encoder's final layer norm and the projector
learn; the first encoder layers and the language model stay frozen. A clip's frozen part is
computed once (:meth:`AudioLM.prefix`); the prompt is the processor's own chat template with each
``<|AUDIO|>`` repeated once per audio token, exactly as ``Qwen2AudioProcessor`` expands it, so
training sees the token sequence inference will.

A *source* of a prompt is a clip's cached prefix (its audio tokens fill the audio slot), a string
(the slot holds that text instead, ``Audio 1: <|audio_bos|>text<|audio_eos|>``: the text stage
trains the LM's adapters to read a statement from the slot before any audio is heard) or ready
:class:`Tokens` (stage 1c: audio tokens moved towards the word pieces their readout names).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import numpy as np

from memgym.pipelines.voxmem.audio_lm.encoding import encode_frames, finish_encoding, mel_features

IGNORE = -100


@dataclasses.dataclass(frozen=True)
class Tokens:
    """Ready audio tokens ``(audio_tokens, hidden)`` for an audio slot (a prompt source computed elsewhere)."""

    embeds: Any


class AudioLM:
    """A ``Qwen2AudioForConditionalGeneration`` with its processor, split into frozen and trained parts.

    Args:
        processor: its ``Qwen2AudioProcessor``.
        model: the model.
        train_layers: encoder layers (from the top) that learn.
        lm_rank: rank of the adapters on the LM's attention projections (0: none, the LM frozen as is;
            :mod:`~memgym.pipelines.voxmem.audio_lm.adapters`).
        seed: draws the adapters' initial down-projections.
    """

    def __init__(self, processor: Any, model: Any, train_layers: int, lm_rank: int = 0, seed: int = 0) -> None:
        encoder = model.model.audio_tower
        n_layers = len(encoder.layers)
        if not 0 <= train_layers <= n_layers:
            raise ValueError(f"train_layers must be 0..{n_layers}, got {train_layers}")
        self.processor, self.model = processor, model
        self.tokenizer = processor.tokenizer
        self.encoder = encoder
        self.start = n_layers - train_layers
        self.audio_token = processor.audio_token
        self.end_id = self.tokenizer.convert_tokens_to_ids("<|im_end|>")
        model.requires_grad_(False)
        for module in (*encoder.layers[self.start :], encoder.layer_norm, model.model.multi_modal_projector):
            module.requires_grad_(True)
        if lm_rank:
            from memgym.pipelines.voxmem.audio_lm.adapters import attach_adapters

            attach_adapters(model.model.language_model, lm_rank, seed)

    def merge_adapters(self) -> None:
        """Fold the LM's adapters (if any) into its weights: the model has the plain checkpoint layout again."""
        from memgym.pipelines.voxmem.audio_lm.adapters import merge_adapters

        merge_adapters(self.model.model.language_model)

    def trainable(self) -> list[Any]:
        """The parameters that learn."""
        return [p for p in self.model.parameters() if p.requires_grad]

    def encoder_parameters(self) -> list[Any]:
        """The trained encoder layers' parameters (empty with ``train_layers=0``; they learn at their own rate)."""
        return [p for layer in self.encoder.layers[self.start :] for p in layer.parameters()]

    def adapter_parameters(self) -> list[Any]:
        """The LM adapters' parameters (empty without ``lm_rank``), learning or frozen."""
        from memgym.pipelines.voxmem.audio_lm.adapters import LowRankLinear

        modules = self.model.model.language_model.modules()
        return [p for m in modules if isinstance(m, LowRankLinear) for p in (m.down, m.up)]

    def freeze_adapters(self, frozen: bool = True) -> None:
        """Stop (or, ``frozen=False``, restart) the LM adapters learning: after the text stage only the
        audio side learns, in stage 1c only the adapters."""
        for p in self.adapter_parameters():
            p.requires_grad_(not frozen)

    def trainable_state(self) -> dict[str, Any]:
        """State dict entries of the learning parameters and the adapters (for checkpoints)."""
        adapters = {id(p) for p in self.adapter_parameters()}
        names = {n for n, p in self.model.named_parameters() if p.requires_grad or id(p) in adapters}
        return {k: v.detach().clone() for k, v in self.model.state_dict().items() if k in names}

    def prefix(self, audio: np.ndarray) -> Any:
        """The clip's frozen encoder output ``(T, d_model)`` (``T`` = 50 frames per second)."""
        import torch

        mel, frames = mel_features(self.processor.feature_extractor, audio)
        with torch.no_grad():
            return encode_frames(self.encoder, mel, frames, self.start)

    def match_embedding_scale(self, prefixes: Sequence[Any]) -> float:
        """Rescale the projector so the audio embeddings of ``prefixes`` have the mean norm of the
        LM's token embeddings (its bias set to zero); returns the factor applied.

        Freshly initialised, Qwen2-Audio's projector maps Whisper tiny's normalised states to
        vectors about 4.5 times longer than SmolLM2's token embeddings, which the frozen LM reads
        as noise; starting at the embeddings' scale is the usual modality-norm matching.
        """
        import torch

        projector = self.model.model.multi_modal_projector.linear
        with torch.no_grad():
            projector.bias.zero_()
            feats = torch.cat([self.audio_embeds(p) for p in prefixes])
            target = self.model.get_input_embeddings().weight.norm(dim=1).mean()
            factor = float(target / feats.norm(dim=1).mean())
            projector.weight.mul_(factor)
        return factor

    def audio_embeds(self, prefix: Any) -> Any:
        """Projected audio features ``(audio_tokens, hidden)`` of a clip's prefix (trained part)."""
        return self.model.model.multi_modal_projector(finish_encoding(self.encoder, prefix, self.start))

    def prompt_ids(self, slots: Sequence[int | str], question: str) -> list[int]:
        """Token ids of the chat prompt: one user message with the audio parts, then ``question``.

        Each slot is a clip's number of audio tokens (``<|AUDIO|>`` repeated, as the processor
        expands it) or a text written in the audio part's place between its markers.
        """
        content = [{"type": "audio", "audio": f"audio-{k}"} for k in range(len(slots))]
        content.append({"type": "text", "text": question})
        return self.chat_ids([{"role": "user", "content": content}], slots)

    def chat_ids(self, chat: Sequence[dict[str, Any]], slots: Sequence[int | str]) -> list[int]:
        """Token ids of chat-template messages ``chat`` whose audio parts are the clips of ``slots``
        in order (each slot as in :meth:`prompt_ids`), then the generation prompt."""
        text = self.processor.apply_chat_template(list(chat), add_generation_prompt=True, tokenize=False)
        pieces = text.split(self.audio_token)
        if len(pieces) != len(slots) + 1:
            raise ValueError("the chat template did not render one audio token per clip")
        fill = [slot if isinstance(slot, str) else self.audio_token * slot for slot in slots]
        expanded = pieces[0] + "".join(part + rest for part, rest in zip(fill, pieces[1:]))
        return self.tokenizer(expanded)["input_ids"]  # as the processor tokenizes it

    def _features(self, sources: Sequence[Any]) -> tuple[list[Any], list[int | str]]:
        """``(audio features of the clip sources, slots)``: strings stay text slots, prefixes become
        ``(audio_tokens, hidden)`` features and their token counts."""
        feats = [p.embeds if isinstance(p, Tokens) else self.audio_embeds(p) for p in sources if not isinstance(p, str)]
        counts = iter(f.shape[0] for f in feats)
        return feats, [p if isinstance(p, str) else next(counts) for p in sources]

    def _embed(self, sources: Sequence[Any], question: str) -> tuple[Any, int]:
        """``((L, hidden) prompt embeddings, L)`` with the audio features in place of the audio tokens."""
        feats, slots = self._features(sources)
        ids = self.prompt_ids(slots, question)
        return self._embed_ids(ids, feats), len(ids)

    def _embed_ids(self, ids: Sequence[int], feats: Sequence[Any]) -> Any:
        """``(len(ids), hidden)`` embeddings of ``ids`` with ``feats`` (concatenated) in place of the audio tokens."""
        import torch

        ids = torch.tensor(list(ids))
        embeds = self.model.get_input_embeddings()(ids)
        if not feats:  # a text-only prompt
            return embeds
        mask = ids == self.model.config.audio_token_id
        return embeds.masked_scatter(mask[:, None], torch.cat(list(feats)).to(embeds.dtype))

    def answer_ids(self, answer: str) -> list[int]:
        """The answer's tokens and the turn's end token."""
        return [*self.tokenizer(answer, add_special_tokens=False)["input_ids"], self.end_id]

    def loss(self, groups: Sequence[tuple[Any, ...]]) -> Any:
        """Mean over every branch of its mean answer-token cross-entropy.

        A group is ``(sources, [(question, answer), ...])``: clips (or texts in their place, module
        docstring) and the questions asked about them, each in one user message after the clips
        (:meth:`prompt_ids`); or ``(sources, branches, layout)`` with ``layout(question)`` the chat
        messages to ask it in (:meth:`chat_ids`, e.g. a VoxMem history). The prompt part its questions
        share (system prompt and the audio) runs through the LM once; each question and its answer
        continue from a copy of that cache, so asking k questions about a clip costs about one prompt
        and k short continuations.
        """
        import torch

        lm = self.model.model.language_model
        per_branch = []
        for sources, branches, *layout in groups:
            feats, slots = self._features(sources)
            prompts = [self.chat_ids(layout[0](q), slots) if layout else self.prompt_ids(slots, q) for q, _ in branches]
            shared = _shared_length(prompts)
            out = lm(inputs_embeds=self._embed_ids(prompts[0][:shared], feats)[None], use_cache=True)
            cache = out.past_key_values
            cache.batch_repeat_interleave(len(branches))
            rows = [(p[shared:], self.answer_ids(a)) for p, (_, a) in zip(prompts, branches)]
            width = max(len(q) + len(a) for q, a in rows)
            ids = torch.full((len(rows), width), self.end_id)
            labels = torch.full((len(rows), width), IGNORE)
            attention = torch.zeros(len(rows), shared + width, dtype=torch.long)
            attention[:, :shared] = 1
            for i, (question, answer) in enumerate(rows):
                ids[i, : len(question) + len(answer)] = torch.tensor(question + answer)
                labels[i, len(question) : len(question) + len(answer)] = torch.tensor(answer)
                attention[i, shared : shared + len(question) + len(answer)] = 1
            hidden = lm(input_ids=ids, past_key_values=cache, attention_mask=attention).last_hidden_state
            shifted = labels[:, 1:]
            keep = shifted != IGNORE
            tokens = torch.nn.functional.cross_entropy(
                self.model.lm_head(hidden[:, :-1][keep]), shifted[keep], reduction="none"
            )
            branch = torch.arange(len(rows))[:, None].expand_as(shifted)[keep]
            sums = torch.zeros(len(rows)).index_add(0, branch, tokens)
            per_branch.append(sums / keep.sum(1))
        return torch.cat(per_branch).mean()

    def align_loss(
        self, batch: Sequence[tuple[Any, str]], vocabulary: Sequence[int], cosine: float = 0.0, norm: float = 0.0
    ) -> Any:
        """Stage 1 loss: CTC of each clip's words over its projected audio tokens read through the
        LM's output matrix restricted to ``vocabulary`` (token ids; blank = the ``<|AUDIO|>`` row),
        mean over ``(prefix, text)`` clips; scores as :meth:`scores` (``cosine``), plus ``norm`` times
        the mean squared deviation of the tokens' norms from the embeddings' mean norm, relative to it.

        SmolLM2 ties its output matrix to its input embeddings, so this pulls each audio token
        towards the embedding of a word piece it carries, before the LM is in the loop. The
        statements use a few hundred word pieces; a softmax over those instead of all 49k costs a
        hundredth (``vocabulary`` must hold every token of the texts).
        """
        import torch

        blank = self.model.config.audio_token_id
        ids = sorted(set(vocabulary) | {blank})
        position = {t: i for i, t in enumerate(ids)}
        mean_norm = self.model.get_input_embeddings().weight.detach().norm(dim=1).mean()
        losses = []
        for prefix, text in batch:
            feats = self.audio_embeds(prefix)
            logp = torch.log_softmax(self.scores(feats, ids, cosine), -1)
            target = torch.tensor([position[t] for t in self.tokenizer(text, add_special_tokens=False)["input_ids"]])
            losses.append(
                torch.nn.functional.ctc_loss(
                    logp[:, None],
                    target[None],
                    torch.tensor([feats.shape[0]]),
                    torch.tensor([target.shape[0]]),
                    blank=position[blank],
                    zero_infinity=True,
                )  # per target token
                + (norm * (feats.norm(dim=1) / mean_norm - 1).pow(2).mean() if norm else 0.0)
            )
        return torch.stack(losses).mean()

    def scores(self, feats: Any, ids: Sequence[int], cosine: float = 0.0) -> Any:
        """``(audio_tokens, len(ids))`` scores of the ``(audio_tokens, hidden)`` features against the
        output rows of token ``ids``: dot products, or with ``cosine > 0`` that many times the cosines
        (the tokens' length then carries nothing; a norm penalty can hold it at the embeddings')."""
        import torch

        rows = self.model.lm_head.weight[torch.as_tensor(list(ids))]
        if not cosine:
            return feats @ rows.T
        normalize = torch.nn.functional.normalize
        return cosine * normalize(feats, dim=-1) @ normalize(rows, dim=-1).T

    def ctc_targets(self, prefix: Any, vocabulary: Sequence[int], cosine: float = 0.0) -> Any:
        """``(audio_tokens,)`` token ids: per audio token, the word piece (or blank, the ``<|AUDIO|>``
        row) its CTC readout over ``vocabulary`` names now (:meth:`align_loss`'s scores, argmax)."""
        import torch

        with torch.no_grad():
            return self.readout(self.audio_embeds(prefix), vocabulary, cosine)

    def readout(self, feats: Any, vocabulary: Sequence[int], cosine: float = 0.0) -> Any:
        """``(audio_tokens,)`` token ids that the ``(audio_tokens, hidden)`` audio features ``feats``
        score highest among ``vocabulary`` and the blank through the LM's output matrix (:meth:`scores`)."""
        import torch

        ids = torch.tensor(sorted(set(vocabulary) | {self.model.config.audio_token_id}))
        return ids[self.scores(feats, ids, cosine).argmax(-1)]

    def snapped_mix(self, prefix: Any, vocabulary: Sequence[int], alpha: float, cosine: float = 0.0) -> Tokens:
        """Stage 1c's source for a clip: ``e + alpha (a - e)`` per audio token ``a``, where ``e`` is the
        input embedding of the word piece (or blank) its readout names (:meth:`readout`); ``alpha=0``:
        the tokens snapped to those embeddings, ``alpha=1``: as they are. No gradient to the audio side.
        """
        import torch

        with torch.no_grad():
            feats = self.audio_embeds(prefix)
            snapped = self.model.get_input_embeddings().weight[self.readout(feats, vocabulary, cosine)]
            return Tokens(snapped + alpha * (feats - snapped))

    def embed_loss(self, batch: Sequence[tuple[Any, Any]]) -> Any:
        """Stage 1b loss: squared distance of each audio token to the input embedding of its target
        token (:meth:`ctc_targets`), over the mean squared norm of the embeddings; mean over audio
        tokens, then over ``(prefix, targets)`` clips.

        CTC only asks an audio token to score its word piece above the others, which it does with
        vectors ~14 times longer than a token embedding, and the frozen LM reads those as noise; this
        puts each audio token where the LM reads that word piece (measured: issue 39, session 17).
        """
        import torch

        table = self.model.get_input_embeddings().weight
        scale = table.detach().pow(2).sum(1).mean()
        losses = [
            (self.audio_embeds(prefix) - table[targets].detach()).pow(2).sum(1).mean() for prefix, targets in batch
        ]
        return torch.stack(losses).mean() / scale

    def answer_rows(self, answers: Sequence[str]) -> Any:
        """``(K, hidden)`` rows naming each answer: the mean input embedding of its tokens (frozen)."""
        import torch

        table = self.model.get_input_embeddings().weight
        with torch.no_grad():
            return torch.stack(
                [table[self.tokenizer(a, add_special_tokens=False)["input_ids"]].mean(0) for a in answers]
            )

    def tag_loss(self, batch: Sequence[tuple[Any, int]], rows: Any) -> Any:
        """Stage 1 tag loss: cross-entropy of each clip's answer among ``rows`` (:meth:`answer_rows`)
        from the dot products of its mean audio embedding, mean over ``(prefix, answer index)`` clips.

        Like :meth:`align_loss` for the words, this pulls every audio token of a clip towards the
        embedding of the word that names how it sounds (a cue, a background sound), without the LM.
        """
        import torch

        pooled = torch.stack([self.audio_embeds(p).mean(0) for p, _ in batch])
        target = torch.tensor([k for _, k in batch])
        return torch.nn.functional.cross_entropy(pooled @ rows.T, target)

    def text_tokens(self, texts: Sequence[str]) -> list[int]:
        """The token ids the ``texts`` use (the vocabulary of :meth:`align_loss`)."""
        return sorted({t for text in texts for t in self.tokenizer(text, add_special_tokens=False)["input_ids"]})

    def answer_fit(self, sources: Sequence[Any], question: str, answer: str) -> tuple[float, float]:
        """``(mean cross-entropy in nats, top-1 accuracy)`` over the answer's tokens, teacher-forced."""
        import torch

        with torch.no_grad():
            prompt, length = self._embed(sources, question)
            ids = torch.tensor(self.answer_ids(answer))
            embeds = torch.cat([prompt, self.model.get_input_embeddings()(ids)])[None]
            hidden = self.model.model.language_model(inputs_embeds=embeds).last_hidden_state[0]
            logits = self.model.lm_head(hidden[length - 1 : -1])
            loss = torch.nn.functional.cross_entropy(logits, ids)
        return float(loss), float((logits.argmax(-1) == ids).float().mean())

    def score(
        self, sources: Sequence[Any], question: str, candidates: Sequence[str], per_token: bool = False
    ) -> np.ndarray:
        """Log-probability ``(K,)`` of each candidate answer (its tokens and the end token) after the
        prompt; with ``per_token``, divided by the candidate's token count (no bias to short answers)."""
        import torch

        lm = self.model.model.language_model
        with torch.no_grad():
            prompt, _ = self._embed(sources, question)
            out = lm(inputs_embeds=prompt[None], use_cache=True)
            first = torch.log_softmax(self.model.lm_head(out.last_hidden_state[0, -1]), -1)
            seqs = [self.answer_ids(c) for c in candidates]
            width = max(len(s) for s in seqs)
            ids = torch.full((len(seqs), width), self.end_id)
            for i, s in enumerate(seqs):
                ids[i, : len(s)] = torch.tensor(s)
            cache = out.past_key_values
            cache.batch_repeat_interleave(len(seqs))
            attention = torch.ones(len(seqs), prompt.shape[0] + width, dtype=torch.long)
            rest = lm(input_ids=ids, past_key_values=cache, attention_mask=attention).last_hidden_state
            logp = torch.log_softmax(self.model.lm_head(rest), -1)
        scores = np.empty(len(seqs))
        for i, s in enumerate(seqs):
            total = float(first[s[0]])
            total += sum(float(logp[i, j - 1, s[j]]) for j in range(1, len(s)))
            scores[i] = total / len(s) if per_token else total
        return scores


def _shared_length(prompts: Sequence[Sequence[int]]) -> int:
    """Tokens at the start of every prompt that all share, leaving each at least one token of its own
    (which predicts the answer's first token)."""
    shortest = min(len(p) for p in prompts)
    shared = 0
    while shared < shortest - 1 and all(p[shared] == prompts[0][shared] for p in prompts):
        shared += 1
    return shared
