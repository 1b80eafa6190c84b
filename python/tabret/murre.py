"""MURRE (Zhang et al., 2025): multi-hop table retrieval with removal, over any rewriter.

Hop 1 retrieves with the question; at every later hop each beam (a path of tables) asks the
rewriter what its tables do not cover yet, or to stop, and retrieves with that. Paths are scored
by the product of P(t|q) = (cos + 1) / 2; a table's score is the max over the paths that contain
it. The rewriter may be the LLM completion rewriter (:class:`tabret.rewriting.MurreRewriter`) or
an offline one (:class:`~tabret.rewriting.CoverageRemovalRewriter` over recorded
decompositions, :class:`~tabret.rewriting.LexicalRemovalRewriter`), or any object with
``rewrite(requests) -> list[RewriteResult]``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Literal

from tabret import _core
from tabret.index import BaseRetriever, TableIndex
from tabret.rewriting import QueryRewriter, RewriteRequest, RewriteResult

__all__ = ["FallbackRewriter", "MurreRetriever", "PathScoring"]

#: How a cosine becomes a path factor: the paper's (cos+1)/2 everywhere, or the reference
#: code's raw cos for beam selection and (cos+2)/2 for the final table scores.
PathScoring = Literal["paper", "reference"]

_MURRE = _core.MurreRetriever.defaults


class MurreRetriever(BaseRetriever):
    """MURRE beam search: ``beam`` paths kept per hop, ``hops`` hops (the first with the
    question). Per batch and hop: one embedder call and one rewriter call (identical requests
    once); a beam whose rewrite says stop makes no further calls, so a question costs at most
    ``beam * (hops - 1)`` rewrite requests.

    Reference-code choices (:meth:`reference` sets them all): ``per_beam`` (tables each beam
    adds per hop; 0 = every table), ``rerank_top`` (later hops search only the hop-1 top N;
    0 = whole catalog), ``per_line_max`` (one query per rewrite line, a table takes its max),
    ``any_beam_stop`` (one beam's stop stops the question), ``scoring="reference"``.

    Ablations: ``removal=False`` (the next query is the question followed by the path's table
    texts; the rewriter is still asked for stops while ``early_stop``), ``early_stop=False`` (a
    stop is ignored; the beam retrieves with the question). Without tabulation is a property of
    the rewriter (``form="question"`` / ``output="terms"``).

    The trace holds, per hop and kept beam, step ``"hop h beam b"`` entries (each path table
    with the query that found it and the path's score) and ``"hop h beam b stop"`` entries.
    """

    def __init__(
        self,
        index: TableIndex,
        rewriter: QueryRewriter,
        *,
        beam: int = _MURRE["beam"],
        hops: int = _MURRE["hops"],
        per_beam: int = _MURRE["per_beam"],
        rerank_top: int = _MURRE["rerank_top"],
        per_line_max: bool = _MURRE["per_line_max"],
        any_beam_stop: bool = _MURRE["any_beam_stop"],
        early_stop: bool = _MURRE["early_stop"],
        removal: bool = _MURRE["removal"],
        scoring: PathScoring = _MURRE["scoring"],
    ) -> None:
        for name, value in (("beam", beam), ("hops", hops)):
            if value <= 0:
                raise ValueError(f"{name} must be positive, got {value}")
        for name, value in (("per_beam", per_beam), ("rerank_top", rerank_top)):
            if value < 0:
                raise ValueError(f"{name} must not be negative, got {value}")
        self.index = index
        self.rewriter = rewriter
        self.beam = beam
        self.hops = hops
        self._core = _core.MurreRetriever(
            index.core,
            index._embed,
            index.embedder_name,
            rewriter,
            beam=beam,
            hops=hops,
            per_beam=per_beam,
            rerank_top=rerank_top,
            per_line_max=per_line_max,
            any_beam_stop=any_beam_stop,
            early_stop=early_stop,
            removal=removal,
            scoring=scoring,
        )

    @classmethod
    def reference(
        cls,
        index: TableIndex,
        rewriter: QueryRewriter,
        *,
        beam: int = _MURRE["beam"],
        hops: int = _MURRE["hops"],
        early_stop: bool = _MURRE["early_stop"],
        removal: bool = _MURRE["removal"],
    ) -> MurreRetriever:
        """The reference code's choices: top ``3 * beam`` per beam, later hops re-rank the hop-1
        top 100, per-line max, any-beam stop, raw cos for selection and (cos+2)/2 at the end."""
        return cls(
            index,
            rewriter,
            beam=beam,
            hops=hops,
            per_beam=3 * beam,
            rerank_top=100,
            per_line_max=True,
            any_beam_stop=True,
            early_stop=early_stop,
            removal=removal,
            scoring="reference",
        )

    def _raw(self, batch: list[str], k: int, k_columns: int) -> list[_core.Retrieval]:
        if k_columns:
            raise ValueError("MurreRetriever ranks tables only (k_columns must be 0)")
        return self._core.retrieve(batch, k, k_columns)


class FallbackRewriter:
    """Rewrites each request with ``primary`` when ``use_primary(question)``, else with
    ``fallback`` (e.g. coverage removal where a decomposition was recorded, lexical removal
    elsewhere). Each rewriter gets one call per batch with its share of the requests."""

    def __init__(
        self,
        primary: QueryRewriter,
        fallback: QueryRewriter,
        use_primary: Callable[[str], bool],
    ) -> None:
        self.primary = primary
        self.fallback = fallback
        self.use_primary = use_primary

    def rewrite(self, requests: Sequence[RewriteRequest | str]) -> list[RewriteResult]:
        reqs = [RewriteRequest(r) if isinstance(r, str) else r for r in requests]
        first = [i for i, r in enumerate(reqs) if self.use_primary(r.question)]
        chosen = set(first)
        rest = [i for i in range(len(reqs)) if i not in chosen]
        out: list[RewriteResult | None] = [None] * len(reqs)
        for rewriter, where in ((self.primary, first), (self.fallback, rest)):
            if where:
                answers = rewriter.rewrite([reqs[i] for i in where])
                for i, answer in zip(where, answers, strict=True):
                    out[i] = answer
        return [r for r in out if r is not None]
