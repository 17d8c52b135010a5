"""Errors a model backend raises for one request.

A :class:`ReasonerError` means *this item* could not be answered (an endpoint timed out after its
retries, a server kept answering 500, a judge's reply could not be parsed). Evaluation loops
catch it, record the message in that item's result row and go on with the next item.
"""

from __future__ import annotations

from memgym.core.errors import MemgymError


class ReasonerError(MemgymError):
    """One generation request failed; the message names the backend and the cause."""
