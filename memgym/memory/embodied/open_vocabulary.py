"""An open-vocabulary detector through transformers zero-shot object detection, with masks from
the box and depth.

It drives any model behind ``AutoModelForZeroShotObjectDetection`` whose processor has
``post_process_grounded_object_detection`` (OWLv2 and OWL-ViT; Grounding DINO's extra
``input_ids`` argument is passed when the processor asks for it). The test suite runs it on a
tiny random OWLv2.

The model (a local folder or hub id) is loaded with ``AutoModelForZeroShotObjectDetection`` and
its ``AutoProcessor``; the text queries are the category names of :attr:`ZeroShotDetector.vocabulary`
(set from the episode's scene categories by the memory's ``bind_episode`` unless configured).
Boxes scoring at least ``threshold`` go through class-agnostic non-maximum suppression (IoU
``nms_iou``). Each box becomes a mask of its *depth-consistent* pixels: those with valid depth
within ``depth_tolerance`` m of the median depth of the box's central half (the object, not the
wall behind it).
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from memgym.core.errors import ConfigError, MemgymError
from memgym.memory.embodied.detections import Detection, Detector, crop_of, mask_box


class ZeroShotDetector(Detector):
    """Zero-shot detection + depth masks (see the module docstring).

    Args:
        model: local folder or hub id of a zero-shot object detection model.
        vocabulary: category names to look for.
        device: torch device.
        threshold: smallest box score kept.
        nms_iou: boxes overlapping a better one by more than this IoU are dropped.
        depth_tolerance: metres around the box's median depth kept in its mask.
        max_detections: most detections per frame (best scores first).
        min_pixels: smallest mask kept.
    """

    name = "zero_shot"

    def __init__(
        self,
        model: str,
        vocabulary: Sequence[str] = (),
        *,
        device: str = "cpu",
        threshold: float = 0.1,
        nms_iou: float = 0.5,
        depth_tolerance: float = 0.3,
        max_detections: int = 20,
        min_pixels: int = 20,
    ) -> None:
        import torch
        from transformers import AutoModelForZeroShotObjectDetection, AutoProcessor

        try:
            self.processor = AutoProcessor.from_pretrained(model)
            self.model = AutoModelForZeroShotObjectDetection.from_pretrained(model).eval().to(device)
        except (OSError, ValueError) as exc:
            raise ConfigError(
                f"detector model '{model}' could not be loaded for zero-shot object detection: {exc}"
            ) from exc
        self._torch = torch
        self.model_id = model
        self.device = device
        self.vocabulary = tuple(vocabulary)
        self.threshold = float(threshold)
        self.nms_iou = float(nms_iou)
        self.depth_tolerance = float(depth_tolerance)
        self.max_detections = int(max_detections)
        self.min_pixels = int(min_pixels)
        self._pads_to_square = "owlv2" in type(self.model).__name__.lower()

    def boxes(self, rgb: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(K, 4)`` boxes ``(x0, y0, x1, y1)`` pixels, ``(K,)`` scores and ``(K,)`` vocabulary indices,
        after the score threshold and NMS, best first."""
        if not self.vocabulary:
            raise MemgymError(
                f"detector '{self.model_id}' has no vocabulary; set vocabulary=[...] or call the memory's bind_episode"
            )
        h, w = rgb.shape[:2]
        queries = [list(self.vocabulary)]
        inputs = self.processor(text=queries, images=[rgb], return_tensors="pt", padding=True).to(self.device)
        with self._torch.no_grad():
            outputs = self.model(**inputs)
        size = (max(h, w), max(h, w)) if self._pads_to_square else (h, w)
        post = self.processor.post_process_grounded_object_detection
        wanted = inspect.signature(post).parameters
        kwargs: dict[str, Any] = {"target_sizes": [size], "threshold": self.threshold}
        if "input_ids" in wanted:  # Grounding DINO matches boxes to query tokens
            kwargs["input_ids"] = inputs["input_ids"]
        if "text_labels" in wanted:
            kwargs["text_labels"] = queries
        result = post(outputs, **{k: v for k, v in kwargs.items() if k in wanted})[0]
        boxes = result["boxes"].detach().cpu().numpy().reshape(-1, 4).astype(np.float64)
        scores = result["scores"].detach().cpu().numpy().astype(np.float64)
        labels = self._label_indices(result)
        boxes[:, [0, 2]] = boxes[:, [0, 2]].clip(0, w)
        boxes[:, [1, 3]] = boxes[:, [1, 3]].clip(0, h)
        keep = non_maximum_suppression(boxes, scores, self.nms_iou)[: self.max_detections]
        return boxes[keep], scores[keep], labels[keep]

    def _label_indices(self, result: Mapping[str, Any]) -> np.ndarray:
        names = result.get("text_labels")
        if names is not None and len(names) and isinstance(names[0], str):
            index = {name: k for k, name in enumerate(self.vocabulary)}
            return np.array([index.get(n, -1) for n in names], np.int64)
        return result["labels"].detach().cpu().numpy().astype(np.int64)

    def detect(self, frame: Mapping[str, Any]) -> list[Detection]:
        rgb = np.asarray(frame["rgb"], np.uint8)
        depth = np.asarray(frame["depth"], np.float32)
        detections = []
        for box, score, label in zip(*self.boxes(rgb)):
            if not 0 <= label < len(self.vocabulary):
                continue
            mask = depth_mask(depth, box, self.depth_tolerance)
            if mask.sum() < self.min_pixels:
                continue
            pixel_box = mask_box(mask)
            detections.append(Detection(mask, self.vocabulary[label], float(score), pixel_box, crop_of(rgb, pixel_box)))
        return detections


def non_maximum_suppression(boxes: np.ndarray, scores: np.ndarray, iou: float) -> np.ndarray:
    """Indices of the boxes kept by greedy NMS, best score first (ties: lower index)."""
    order = np.lexsort((np.arange(len(scores)), -scores))
    area = np.maximum(boxes[:, 2] - boxes[:, 0], 0) * np.maximum(boxes[:, 3] - boxes[:, 1], 0)
    kept: list[int] = []
    for k in order:
        if kept:
            other = boxes[kept]
            wx = np.minimum(other[:, 2], boxes[k, 2]) - np.maximum(other[:, 0], boxes[k, 0])
            wy = np.minimum(other[:, 3], boxes[k, 3]) - np.maximum(other[:, 1], boxes[k, 1])
            inter = np.maximum(wx, 0) * np.maximum(wy, 0)
            union = area[kept] + area[k] - inter
            if np.any(inter > iou * np.maximum(union, 1e-12)):
                continue
        kept.append(int(k))
    return np.array(kept, np.int64)


def depth_mask(depth: np.ndarray, box: np.ndarray, tolerance: float) -> np.ndarray:
    """``(H, W) bool``: pixels of ``box`` ``(x0, y0, x1, y1)`` with depth within ``tolerance`` m of
    the median valid depth of the box's central half (empty when that half has no valid depth)."""
    h, w = depth.shape
    x0, y0 = int(np.floor(box[0])), int(np.floor(box[1]))
    x1, y1 = max(int(np.ceil(box[2])), x0 + 1), max(int(np.ceil(box[3])), y0 + 1)
    mask = np.zeros((h, w), bool)
    region = depth[y0:y1, x0:x1]
    if region.size == 0:
        return mask
    rh, rw = region.shape
    centre = region[rh // 4 : rh - rh // 4 or rh, rw // 4 : rw - rw // 4 or rw]
    valid = centre[centre > 0]
    if valid.size == 0:
        return mask
    reference = float(np.median(valid))
    mask[y0:y1, x0:x1] = (region > 0) & (np.abs(region - reference) <= tolerance)
    return mask
