"""Errors a model backend raises for one request.

A :class:`ReasonerError` means *this item* could not be answered (an endpoint timed out after its
retries, a server kept answering 500, a judge's reply could not be parsed). Evaluation loops
catch it, record the message in that item's result row and go on with the next item.
"""

from __future__ import annotations

from memgym.core.errors import MemgymError


class ReasonerError(MemgymError):
    """One generation request failed; the message names the backend and the cause."""


class OverContextError(ReasonerError):
    """The prompt does not fit the model's context (the item is recorded as over context, not cut).

    Attributes:
        tokens: the prompt's length in the model's tokens (or the estimate that exceeded the limit).
        limit: the model's context limit in tokens.
    """

    def __init__(self, message: str, *, tokens: int = 0, limit: int = 0) -> None:
        super().__init__(message)
        self.tokens = tokens
        self.limit = limit
