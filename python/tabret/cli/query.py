"""``tabret query``: every method of :mod:`tabret.methods` over a saved index, with an LLM
when ``--llm local`` or ``--llm-url`` is given and the offline path otherwise."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from tabret import _text
from tabret.adaptive import ThresholdRule
from tabret.cli import _llm
from tabret.cli._common import (
    add_reranker_argument,
    add_threshold_rule,
    embedder_arg,
    load_reranker,
    positive_int,
)
from tabret.index import check_questions
from tabret.methods import (
    METHODS,
    AdaptiveOptions,
    Inputs,
    Method,
    compose,
    method_help,
    method_names,
    pipeline_stages,
    score_meaning,
)
from tabret.tuning import Choice, StageOptions
from tabret.tuning import resolve as resolve_choice
from tabret.tuning import saved as saved_choice

if TYPE_CHECKING:
    from tabret import _core
    from tabret.index import BaseRetriever, TableIndex
    from tabret.results import Retrieval
    from tabret.rewriting import LLMLike

#: The adaptive cut of ``tabret query``: z = 1.25, fitted on SpiderUnion for 80% complete
#: recall (docs/results.md); ``tabret eval`` starts from the scorer's own defaults instead.
QUERY_RULE: ThresholdRule = "zscore"
QUERY_THRESHOLD = 1.25
#: Tables per question when none is asked for (``tabret query --k``, ``tabret serve``).
DEFAULT_K = 5


@dataclass(frozen=True)
class MethodChoice:
    """What answers the questions: ``--method`` or a ``--pipeline`` spec (neither: the index's
    default, :func:`resolve`), ``--closure``, and the adaptive cut's rule; the defaults are
    ``tabret query``'s (``tabret serve`` shares them). ``options``: what a tuned pipeline sets
    in its stages."""

    method: str | None = None
    pipeline: str | None = None
    closure: bool = False
    adaptive: AdaptiveOptions = field(
        default_factory=lambda: AdaptiveOptions(rule=QUERY_RULE, value=QUERY_THRESHOLD)
    )
    options: StageOptions = ()
    #: A cross-encoder directory (--reranker): the rerank stage's and adaptive's scorer.
    reranker: str | None = None
    #: Who chose it: the caller ("asked"), or :func:`resolve` ("tuned": the pipeline `tabret
    #: tune` saved; "default": the default for what the index holds).
    origin: Literal["asked", "tuned", "default"] = "asked"

    @property
    def spec(self) -> str:
        """The method or pipeline, as ``score_meaning`` and ``pipeline_stages`` read it (once
        :func:`resolve` filled in the default)."""
        spec = self.pipeline or self.method
        if spec is None:
            raise ValueError("the index's default pipeline is not resolved yet")
        return spec

    @property
    def label(self) -> str:
        """The method or pipeline with the options a tuned pipeline sets."""
        return Choice(self.spec, self.options).label


@dataclass(frozen=True)
class QueryOptions:
    index: str
    questions: list[str]
    file: str | None
    k: int
    choice: MethodChoice
    llm: _llm.LLMChoice
    embedder: str | None
    json: bool
    quiet: bool


@dataclass(frozen=True)
class SavedParts:
    """What ``tabret query`` read from the index directory besides the index (one read)."""

    path: str
    graph: _core.JoinGraph | None
    questions: _core.QuestionIndex | None
    tuning: Choice | None = None  # the pipeline `tabret tune` saved


HELP = "retrieve tables for questions from a saved index"
DESCRIPTION = (
    "Loads an index saved by `tabret index` and prints the top tables for each "
    "question, best first, with their scores."
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("index", metavar="INDEX_DIR", help="a directory written by `tabret index`")
    p.add_argument("question", nargs="*", help="questions (or use --file)")
    p.add_argument("--file", metavar="FILE", help="more questions, one per line ('-': stdin)")
    p.add_argument(
        "--k",
        type=positive_int,
        default=DEFAULT_K,
        help="tables per question (default: 5; adaptive prints its own cut instead); a note "
        "says when fewer came back (bm25 returns only tables that share a term with the "
        "question)",
    )
    _add_method_arguments(p)
    p.add_argument(
        "--embedder",
        help="the embedder the index was built with (default: the name saved in the index)",
    )
    p.add_argument("--json", action="store_true", help="print results as JSON")
    p.add_argument("--quiet", action="store_true", help="no model-loading bar")


def _add_method_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--method",
        choices=method_names(),
        help=method_help() + ". The join graph, generated questions and values come from "
        "`tabret index`, the LLM from --llm. Default (neither --method nor --pipeline): the "
        "pipeline `tabret tune` saved in the index, else hybrid + reverse > greedy-join with "
        "what the index holds: reverse with generated questions, values fused in with cell "
        "values, greedy-join over a join graph",
    )
    p.add_argument(
        "--pipeline",
        metavar="'FIRST > STAGE …'",
        help="a composed method instead of --method: a first stage, then stages that take one "
        "(e.g. 'reverse > greedy-join > closure', 'route > greedy-join'), each with its inputs",
    )
    p.add_argument(
        "--closure",
        action="store_true",
        help="add the bridge tables on foreign-key paths between the tables found (needs the "
        "join graph)",
    )
    add_reranker_argument(p)
    _llm.add_optional_arguments(
        p, "LLM (crush; optional for murre, greedy-join, jar-exact)", "the offline path"
    )
    g = p.add_argument_group("adaptive")
    add_threshold_rule(
        g,
        QUERY_RULE,
        several=False,
        help="how the cut threshold follows the question's cosines (default: zscore)",
    )
    g.add_argument(
        "--threshold",
        type=float,
        default=QUERY_THRESHOLD,
        help="the rule's value (default: z = 1.25, fitted on SpiderUnion for 80%% complete "
        "recall; see docs/results.md)",
    )


def command(args: argparse.Namespace) -> int:
    return run(
        QueryOptions(
            index=args.index,
            questions=list(args.question),
            file=args.file,
            k=args.k,
            choice=MethodChoice(
                method=args.method,
                pipeline=args.pipeline,
                closure=args.closure,
                adaptive=AdaptiveOptions(rule=args.threshold_rule, value=args.threshold),
                reranker=args.reranker,
            ),
            llm=_llm.choice(args),
            embedder=args.embedder,
            json=args.json,
            quiet=args.quiet,
        )
    )


def _questions(o: QueryOptions) -> list[str]:
    """The questions given as arguments, then --file's non-blank lines (UTF-8, a leading byte
    order mark skipped; ``-``: stdin); checked before the index is read."""
    questions = list(o.questions)
    check_questions(questions)
    if o.file:
        if o.file == "-":
            lines = _text.split_lines(_text.decode(sys.stdin.buffer.read(), "<stdin>"))
        else:
            lines = _text.read_lines(Path(o.file))
        questions += [line.strip() for line in lines if line.strip()]
    if not questions:
        raise ValueError("no question given (pass questions as arguments or --file)")
    return questions


def load_directory(
    path: str, embedder: str | None = None, quiet: bool = False
) -> tuple[TableIndex, SavedParts]:
    """The index saved in ``path`` and what else its directory holds, from one consistent read;
    queried with ``embedder`` (a command line's name) or else the one the index was saved with."""
    from tabret._core import load_index
    from tabret.embedders import saved_embedder
    from tabret.index import TableIndex

    core, graph, generated, values, tuning = load_index(path)  # one consistent read
    embed = (
        embedder_arg(embedder, quiet)
        if embedder
        else saved_embedder(core.embedder_name, progress=not quiet)
    )
    index = TableIndex(core, embed, values)  # type: ignore[arg-type]
    return index, SavedParts(path, graph, generated, saved_choice(tuning, path))


def resolve(o: MethodChoice, index: TableIndex, saved: SavedParts) -> MethodChoice:
    """``o`` with the index's default filled in where it names no method or pipeline: the
    pipeline `tabret tune` saved, else the default pipeline for what the directory holds
    (:func:`tabret.tuning.default_choice`). A saved choice that needs a part the directory no
    longer holds gives way to that default, with a note."""
    if o.method is not None or o.pipeline is not None:
        return o
    choice, note = resolve_choice(
        saved.tuning,
        graph=saved.graph is not None,
        questions=saved.questions is not None,
        values=index.values is not None,
    )
    if note:
        print(f"note: {saved.path}: {note}", file=sys.stderr)
    origin: Literal["tuned", "default"] = (
        "tuned" if saved.tuning is not None and note is None else "default"
    )
    return replace(o, pipeline=choice.pipeline, options=choice.options, origin=origin)


def run(o: QueryOptions) -> int:
    questions = _questions(o)
    index, saved = load_directory(o.index, o.embedder, o.quiet)
    choice = resolve(o.choice, index, saved)
    with _llm.open_llm(o.llm, quiet=o.quiet) as live:
        retriever = make_retriever(choice, index, saved, live.llm if live else None)
        results = retriever.retrieve(questions, o.k)
    note = fewer_note(choice, o.k, results, index.catalog.num_tables)
    if note:
        print(note, file=sys.stderr)
    if o.json:
        print(json.dumps([asdict(r) for r in results], indent=2))
        return 0
    if choice.origin != "asked":
        print(f"({choice.origin} pipeline: {choice.label})")
    print(f"(rank. score  table; score: {score_meaning(choice.spec)})")
    for res in results:
        print(res.question)
        bridges = {s.table for s in res.trace if s.step == "bridge"}
        for rank, t in enumerate(res.selected, 1):
            print(
                f"  {rank:>3}. {t.score:7.3f}  {t.name}{'  (bridge)' if t.name in bridges else ''}"
            )
    return 0


#: Methods whose number of tables is their own answer (the adaptive cut; CRUSH's tables of its
#: --k columns): fewer than --k tables from them is no news.
OWN_SIZE = frozenset({"adaptive", "crush"})


def fewer_note(
    choice: MethodChoice, k: int, results: list[Retrieval], num_tables: int
) -> str | None:
    """A note when questions got fewer than ``k`` tables, with the reason where it is known."""
    stages = (
        {m.name for m in pipeline_stages(choice.pipeline)} if choice.pipeline else {choice.spec}
    )
    short = [r for r in results if len(r.selected) < k]
    if not short or stages & OWN_SIZE:
        return None
    if len(results) == 1:
        what = f"{len(short[0].selected)} of {k} tables came back"
    else:
        what = f"{len(short)} of {len(results)} questions got fewer than {k} tables"
    if num_tables < k:
        why = f": the index holds {num_tables} tables"
    elif "bm25" in stages:
        why = ": bm25 returns only tables that share a term with the question"
    else:
        why = ""
    return f"note: {what}{why}"


def make_retriever(
    o: MethodChoice, index: TableIndex, saved: SavedParts, llm: LLMLike | None
) -> BaseRetriever:
    """The retriever ``--method`` or ``--pipeline`` names over a loaded index, or else its
    default (:func:`resolve`); ``--closure`` wraps it."""
    o = resolve(o, index, saved)
    chosen = Choice(o.spec, o.options)  # what the stages set besides their defaults

    def build(method: Method[Any], first: BaseRetriever | None) -> BaseRetriever:
        inputs = replace(
            _inputs(method, index, saved, llm, note_offline=o.origin == "asked"),
            first=first,
            reranker=load_reranker(o.reranker) if o.reranker and _wants_reranker(method) else None,
        )
        return method.build(index, inputs, chosen.stage_options(method, _options(method, o)))

    base = compose(o.pipeline, build) if o.pipeline else build(METHODS[o.spec], None)
    if not o.closure:
        return base
    closure = METHODS["closure"]
    return closure.build(index, Inputs(first=base), closure.options())


def _wants_reranker(method: Method[Any]) -> bool:
    """Whether ``method`` takes a reranker: a stage that does not is built without loading it."""
    return "reranker" in method.needs | method.uses


def _options(method: Method[Any], o: MethodChoice) -> object:
    return o.adaptive if isinstance(method.options(), AdaptiveOptions) else method.options()


def _inputs(
    method: Method[Any],
    index: TableIndex,
    saved: SavedParts,
    llm: LLMLike | None,
    *,
    note_offline: bool = True,
) -> Inputs:
    """What ``method`` needs, from the index directory and --llm; a clear error (or, with
    ``note_offline``, a note that it runs offline) where something is missing."""
    from tabret.join import JoinGraph
    from tabret.reverse import GeneratedQuestions

    graph = questions = None
    if "join-graph" in method.needs:
        if saved.graph is None:
            raise ValueError(
                f"{saved.path} has no join graph: `tabret index` saves one (unless --join-graph "
                "none)"
            )
        graph = JoinGraph(saved.graph, index)
    if "questions" in method.needs:
        if saved.questions is None:
            raise ValueError(
                f"{saved.path} has no generated questions: `tabret index` saves them (unless "
                "--no-questions)"
            )
        questions = GeneratedQuestions(saved.questions, index)
    if "values" in method.needs and index.values is None:
        raise ValueError(f"{saved.path} has no cell values: build it with `tabret index --values`")
    if "llm" in method.needs and llm is None:
        raise ValueError(
            f"{method.name} hallucinates a schema with an LLM: give --llm local or --llm-url"
        )
    if llm is None and method.offline and note_offline:
        print(f"note: {method.name} without an LLM: {method.offline}", file=sys.stderr)
    return Inputs(llm=llm, graph=graph, questions=questions)
