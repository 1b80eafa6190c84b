"""The default pipeline, adapted to what an index holds, and ``tabret tune``: the pipeline and
its knobs chosen by cross-validation on a user's own questions, saved in the index directory.

:func:`default_choice` is what ``tabret query``, ``tabret serve`` and :func:`default_retriever`
run when nothing is asked for: the documented default ``hybrid + reverse > greedy-join``, with
``reverse`` only where generated questions were saved, ``values`` fused in where cell values
were, and ``greedy-join`` only over a join graph. :func:`tune` scores every pipeline of
:func:`candidates` on labelled questions and picks one; :func:`save` stores it as the index
directory's ``tuning`` part, which the default then is.

>>> report = tune(index, questions_benchmark("mine.jsonl", index.catalog), inputs)
>>> print(report.format())
"""

from __future__ import annotations

import json
import os
import random
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields, is_dataclass, replace
from itertools import combinations
from typing import TYPE_CHECKING, Any

from tabret import _core
from tabret.methods import Inputs, Method, compose, pipeline_stages

if TYPE_CHECKING:
    from tabret.benchmarks import Benchmark
    from tabret.index import EmbedderLike, TableIndex
    from tabret.join import JoinGraph
    from tabret.pipeline import Pipeline
    from tabret.reverse import GeneratedQuestions
    from tabret.rewriting import LLMLike

__all__ = [
    "POOLS",
    "Choice",
    "StageOptions",
    "Trial",
    "TuneReport",
    "candidates",
    "default_choice",
    "default_retriever",
    "load_default",
    "resolve",
    "save",
    "saved",
    "tune",
]

#: Option values a choice sets, as ``(stage, option, value)``: hashable, JSON scalars.
StageOptions = tuple[tuple[str, str, int | float | str | bool], ...]
#: The candidate pools of ``greedy-join`` that :func:`candidates` tries (20 is its default).
POOLS = (20, 50, 100)
#: The fewest labelled questions :func:`tune` accepts.
MIN_QUESTIONS = 10


@dataclass(frozen=True)
class Choice:
    """A pipeline (a ``tabret query --pipeline`` spec) and the options its stages take other
    than their defaults; checked when made (:class:`ValueError` for an unknown stage or
    option)."""

    pipeline: str
    options: StageOptions = ()

    def __post_init__(self) -> None:
        stages = {m.name: m for m in pipeline_stages(self.pipeline)}
        for name, option, _ in self.options:
            if name not in stages:
                raise ValueError(f"pipeline '{self.pipeline}' has no stage '{name}'")
            known = _option_names(stages[name])
            if option not in known:
                raise ValueError(
                    f"{name} has no option '{option}' (its options: {', '.join(known) or '-'})"
                )

    @property
    def label(self) -> str:
        """The pipeline with its options, e.g. ``hybrid > greedy-join (greedy-join
        candidates=50)``."""
        if not self.options:
            return self.pipeline
        shown = ", ".join(f"{s} {o}={v}" for s, o, v in self.options)
        return f"{self.pipeline} ({shown})"

    @property
    def needs(self) -> frozenset[str]:
        """What its stages cannot run without."""
        return frozenset(n for m in pipeline_stages(self.pipeline) for n in m.needs)

    def stage_options(self, method: Method[Any], options: object) -> object:
        """``options`` (the stage's own) with what this choice sets for ``method``."""
        changes = {o: v for s, o, v in self.options if s == method.name}
        return replace(options, **changes) if changes else options  # type: ignore[type-var]

    def build(self, index: TableIndex, inputs: Inputs | None = None) -> Pipeline:
        """This pipeline over ``index``, each stage with ``inputs`` and its options."""
        given = inputs or Inputs()
        return compose(
            self.pipeline,
            lambda m, first: m.build(
                index, replace(given, first=first), self.stage_options(m, m.options())
            ),
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "pipeline": self.pipeline,
            "options": [{"stage": s, "option": o, "value": v} for s, o, v in self.options],
        }

    @classmethod
    def from_json(cls, data: object, source: str) -> Choice:
        """The choice :meth:`to_json` wrote; :class:`tabret.SchemaError` naming ``source`` for
        anything else."""
        try:
            if not isinstance(data, dict) or not isinstance(data.get("pipeline"), str):
                raise ValueError("expected an object with a 'pipeline' string")
            options = data.get("options", [])
            if not isinstance(options, list):
                raise ValueError("'options' must be a list")
            triples = []
            for o in options:
                if not isinstance(o, dict) or not {"stage", "option", "value"} <= o.keys():
                    raise ValueError("each option must be {stage, option, value}")
                triples.append((str(o["stage"]), str(o["option"]), o["value"]))
            return cls(data["pipeline"], tuple(triples))
        except ValueError as err:
            raise _core.SchemaError(f"{source}: the tuned pipeline is not valid: {err}") from None


def _option_names(method: Method[Any]) -> list[str]:
    options = method.options()
    return [f.name for f in fields(options)] if is_dataclass(options) else []


def default_choice(*, graph: bool, questions: bool, values: bool) -> Choice:
    """The documented default pipeline, ``hybrid + reverse > greedy-join``, adapted to what
    there is: ``reverse`` with generated ``questions`` only, ``values`` fused in when the index
    holds cell values (chosen on Spider train, docs/results.md), ``greedy-join`` over a join
    ``graph`` only; without one, ``expand`` moves the top table's key neighbours up (chosen on
    Spider train; after greedy-join it does not help, docs/results.md)."""
    first = ["hybrid", *(["reverse"] if questions else []), *(["values"] if values else [])]
    return Choice(" + ".join(first) + (" > greedy-join" if graph else " > expand"))


def resolve(
    tuned: Choice | None, *, graph: bool, questions: bool, values: bool
) -> tuple[Choice, str | None]:
    """What runs by default where these parts are held: ``tuned`` (what ``tabret tune``
    saved), else :func:`default_choice`; with a note when ``tuned`` needs a part that is not
    held and gives way to the default."""
    held = {"join-graph": graph, "questions": questions, "values": values}
    default = default_choice(graph=graph, questions=questions, values=values)
    if tuned is None:
        return default, None
    missing = sorted(n for n in tuned.needs if not held.get(n, False))
    if not missing:
        return tuned, None
    return default, (
        f"the tuned pipeline {tuned.label} needs {', '.join(missing)}, which is not there: "
        f"running the default {default.label} (re-run `tabret tune`)"
    )


def default_retriever(
    index: TableIndex,
    *,
    join_graph: JoinGraph | None = None,
    questions: GeneratedQuestions | None = None,
    llm: LLMLike | None = None,
    tuned: Choice | None = None,
) -> Pipeline:
    """What ``tabret query`` runs with no ``--method`` or ``--pipeline``: ``tuned`` (what
    ``tabret tune`` saved) where it can run, else :func:`default_choice` for what is given here
    and the index holds (a :class:`UserWarning` says when ``tuned`` could not run). ``llm``
    gives ``greedy-join`` its decompositions."""
    choice, note = resolve(
        tuned,
        graph=join_graph is not None,
        questions=questions is not None,
        values=index.values is not None,
    )
    if note:
        warnings.warn(note, stacklevel=2)
    return choice.build(index, Inputs(llm=llm, graph=join_graph, questions=questions))


def load_default(
    path: str | os.PathLike[str], embedder: EmbedderLike = None, llm: LLMLike | None = None
) -> Pipeline:
    """:func:`default_retriever` over the index directory ``path``, with its join graph,
    generated questions, values and tuned pipeline, from one consistent read: what ``tabret
    query PATH`` runs."""
    from tabret.index import load_all

    index, graph, questions, tuning = load_all(path, embedder)
    return default_retriever(
        index,
        join_graph=graph,
        questions=questions,
        llm=llm,
        tuned=saved(tuning, os.fspath(path)),
    )


def candidates(*, graph: bool, questions: bool, values: bool) -> list[Choice]:
    """The pipelines :func:`tune` tries, :func:`default_choice` first: single-hop or hybrid,
    each fused with every subset of reverse (with questions) and values (with values); each
    alone, followed by expand and, over a join graph, by greedy-join with each of
    :data:`POOLS`."""
    extras = [*(["reverse"] if questions else []), *(["values"] if values else [])]
    firsts = [
        " + ".join([base, *subset])
        for base in ("hybrid", "single-hop")
        for n in range(len(extras), -1, -1)
        for subset in combinations(extras, n)
    ]
    out = [default_choice(graph=graph, questions=questions, values=values)]
    for first in firsts:
        options: list[Choice] = [Choice(first), Choice(f"{first} > expand")]
        if graph:
            options += [
                Choice(
                    f"{first} > greedy-join",
                    () if pool == POOLS[0] else (("greedy-join", "candidates", pool),),
                )
                for pool in POOLS
            ]
        out += [c for c in options if c not in out]
    return out


@dataclass(frozen=True)
class Trial:
    """One pipeline's scores at ``k`` on the tuning questions."""

    choice: Choice
    complete_recall: float  # percent of questions with every gold table in the top k
    recall: float  # mean percent of gold tables in the top k
    mean_tables: float


@dataclass(frozen=True)
class TuneReport:
    """What :func:`tune` tried and chose."""

    k: int
    questions: int
    folds: int
    trials: list[Trial]  # in the order tried, the default first
    best: Trial  # the best on all the questions
    #: Complete recall at k of tuning itself, estimated by cross-validation: each fold's
    #: questions scored by the pipeline that was best on the other folds.
    cross_validated: float
    chosen: Choice  # ``best``, unless cross-validation says tuning does not beat the default

    @property
    def default(self) -> Trial:
        return self.trials[0]

    def to_json(self) -> dict[str, Any]:
        """What :func:`save` stores: the choice and how it was made."""
        return {
            **self.chosen.to_json(),
            "k": self.k,
            "questions": self.questions,
            "folds": self.folds,
            "complete_recall": self.best.complete_recall,
            "default": self.default.choice.to_json(),
            "default_complete_recall": self.default.complete_recall,
            "cross_validated": self.cross_validated,
            "tried": len(self.trials),
        }

    def format(self) -> str:
        """A table of every trial, best first, and what was chosen and why."""
        rows = sorted(self.trials, key=_rank, reverse=True)
        width = max(len(t.choice.label) for t in rows)
        lines = [
            f"{self.questions} questions, complete recall / recall / tables at k = {self.k}:",
            *(
                f"  {t.choice.label:<{width}}  {t.complete_recall:5.1f}  {t.recall:5.1f}  "
                f"{t.mean_tables:5.2f}{'  (default)' if t is self.default else ''}"
                for t in rows
            ),
            f"cross-validated ({self.folds} folds), choosing on the other folds: "
            f"{self.cross_validated:.1f}, against the default's {self.default.complete_recall:.1f}",
        ]
        if self.chosen == self.default.choice:
            why = (
                "the default is the best"
                if self.best is self.default
                else "tuning does not beat the default under cross-validation"
            )
            lines.append(f"chosen: {self.chosen.label} ({why})")
        else:
            lines.append(f"chosen: {self.chosen.label}")
        return "\n".join(lines)


def _rank(t: Trial) -> tuple[float, float, float]:
    return (t.complete_recall, t.recall, -t.mean_tables)


def _scores(
    choice: Choice, index: TableIndex, inputs: Inputs, bench: Benchmark, k: int
) -> list[tuple[float, float, int]]:
    """Per question: (complete, recall, tables returned) of ``choice`` at ``k``, scored as
    :func:`tabret.eval.evaluate` scores them (a family's member counts for the family)."""
    from tabret.eval import _as_families, evaluate

    result = evaluate(
        choice.build(index, inputs).retrieve, bench, [k], method=choice.label, progress=False
    )
    out = []
    for q, row in zip(bench.questions, result.per_question, strict=True):
        answer = row["answers"][k]
        gold, scored = set(row["gold"]), set(_as_families(q, answer))
        found = len(gold & scored)
        out.append((float(found == len(gold)), found / len(gold), len(answer)))
    return out


def _trial(choice: Choice, scores: Sequence[tuple[float, float, int]]) -> Trial:
    n = max(len(scores), 1)
    return Trial(
        choice,
        100 * sum(s[0] for s in scores) / n,
        100 * sum(s[1] for s in scores) / n,
        sum(s[2] for s in scores) / n,
    )


def _best(trials: Sequence[Trial]) -> int:
    """The index of the best trial; the earliest (the default first) among equals."""
    best = 0
    for i, t in enumerate(trials):
        if _rank(t) > _rank(trials[best]):
            best = i
    return best


def tune(
    index: TableIndex,
    bench: Benchmark,
    inputs: Inputs | None = None,
    *,
    k: int = 5,
    folds: int = 5,
    seed: int = 0,
    progress: Callable[[str], None] | None = None,
) -> TuneReport:
    """Scores every pipeline of :func:`candidates` (for what ``inputs`` and the index hold) at
    ``k`` on ``bench``'s questions, and chooses the best (complete recall, then recall, then
    fewer tables; the default among equals). It keeps the default unless tuning, estimated by
    ``folds``-fold cross-validation (questions shuffled with ``seed``), beats the default's own
    score. ``progress`` is told each pipeline as it is scored. :class:`ValueError` for fewer
    than ten questions, ``k`` or ``folds`` below 1 or 2, or more folds than questions."""
    inputs = inputs or Inputs()
    n = len(bench.questions)
    if k < 1:
        raise ValueError(f"k must be at least 1, not {k}")
    if n < MIN_QUESTIONS:
        raise ValueError(f"tune needs at least {MIN_QUESTIONS} questions with gold tables, not {n}")
    if not 2 <= folds <= n:
        raise ValueError(f"folds must be between 2 and the {n} questions, not {folds}")
    choices = candidates(
        graph=inputs.graph is not None,
        questions=inputs.questions is not None,
        values=index.values is not None,
    )
    memo = index.with_question_memo()  # each question is embedded once, not once per pipeline
    per_question = []
    for i, choice in enumerate(choices, 1):
        if progress is not None:
            progress(f"[{i}/{len(choices)}] {choice.label}")
        per_question.append(_scores(choice, memo, inputs, bench, k))
    trials = [_trial(c, s) for c, s in zip(choices, per_question, strict=True)]
    order = list(range(n))
    random.Random(seed).shuffle(order)
    held_out = 0.0
    for f in range(folds):
        test = set(order[f::folds])
        train = [[s for q, s in enumerate(qs) if q not in test] for qs in per_question]
        pick = _best([_trial(c, s) for c, s in zip(choices, train, strict=True)])
        held_out += sum(per_question[pick][q][0] for q in test)
    cross_validated = 100 * held_out / n
    best = trials[_best(trials)]
    chosen = best.choice if cross_validated > trials[0].complete_recall else trials[0].choice
    return TuneReport(k, n, folds, trials, best, cross_validated, chosen)


def save(path: str | os.PathLike[str], index: TableIndex, report: TuneReport) -> None:
    """Stores ``report``'s choice as the ``tuning`` part of the index directory ``path``, which
    must hold ``index`` (its other parts are kept; an interrupted save keeps the old
    directory)."""
    _core.save_tuning(path, index.core, json.dumps(report.to_json()))


def saved(text: str | None, source: str) -> Choice | None:
    """The choice a directory's ``tuning`` part holds (``load_index``'s JSON text)."""
    return None if text is None else Choice.from_json(json.loads(text), source)
