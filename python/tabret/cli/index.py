"""``tabret index``: build a table index over a schema and save it, with the join graph and
the generated questions ``tabret query --method`` needs when asked."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from tabret.cli import _llm
from tabret.cli._common import (
    LOADERS,
    CopiesChoice,
    FamiliesChoice,
    Identifiers,
    Keys,
    add_catalog_arguments,
    add_embedding_arguments,
    add_source_arguments,
    embedder_arg,
    understood,
)
from tabret.index import TableFormat

if TYPE_CHECKING:
    from tabret._core import CachedEmbedder, ColumnStats
    from tabret.catalog import Catalog
    from tabret.index import TableIndex
    from tabret.join import JoinGraph
    from tabret.reverse import GeneratedQuestions
    from tabret.rewriting import LLMLike
    from tabret.values import ValueIndex


@dataclass(frozen=True)
class IndexOptions:
    format: str
    source: str
    out: str
    replace: bool
    update: bool
    embedder: str
    embedding_cache: str | None
    text: TableFormat
    kind: Literal["auto", "exact", "hnsw", "sparse", "int8", "pca"]
    columns: bool
    quiet: bool
    identifiers: Identifiers
    abbreviations: str | None
    keys: Keys
    families: FamiliesChoice
    copies: CopiesChoice
    join_graph: Literal["auto", "compatibility", "keys"] | None
    column_stats: bool
    values: bool
    values_time_budget: float | None
    questions: bool
    llm: _llm.LLMChoice


HELP = "build a table index over a schema and save it"
DESCRIPTION = (
    "Embeds every table (and column) of the schema and saves a versioned, "
    "checksummed index directory that `tabret query` and TableIndex.load read."
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_source_arguments(p)
    p.add_argument(
        "out",
        metavar="INDEX_DIR",
        help="directory to write (replaced atomically; only an empty directory or one tabret "
        "saved is ever replaced)",
    )
    p.add_argument(
        "--replace",
        action="store_true",
        help="discard a join graph or generated questions saved in INDEX_DIR for another "
        "catalog or embedder (without it, such a save is refused)",
    )
    p.add_argument(
        "--update",
        action="store_true",
        help="INDEX_DIR holds an index of this SOURCE before a schema change: re-read SOURCE "
        "and embed only the tables and columns whose text changed or is new, taking every other "
        "vector from INDEX_DIR (give the options it was built with; the join graph, generated "
        "questions and values are rebuilt as asked, and those saved for the old catalog are "
        "replaced)",
    )
    add_embedding_arguments(p, "--text")
    p.add_argument(
        "--kind",
        default="auto",
        choices=["auto", "exact", "hnsw", "sparse", "int8", "pca"],
        help="auto (default): exact search up to 8 MiB of vectors (tables and columns each), "
        "above that sparse for the hashing embedder's sparse vectors and pca for dense ones "
        "such as MiniLM's; exact: a dense scan; sparse: an inverted index for sparse vectors, "
        "exact up to a million postings a question, then the best 4,000 re-scored exactly; "
        "int8: exact search that scans int8 codes first (dense vectors, about twice as fast "
        "on large catalogs, a quarter more memory); pca: approximate, for dense vectors: a scan "
        "of 2-bit codes of 128 principal components, the best 10,000 rows scored on 4-bit "
        "codes of 256, the best 1,000 of those re-scored exactly; hnsw: an approximate graph "
        "(measure its recall on your questions first). docs/benchmarks.md §2 has each kind's "
        "recall and speed",
    )
    p.add_argument("--no-columns", action="store_true", help="index tables only, not columns")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    add_catalog_arguments(
        p, "; the index holds the collapsed catalog, a family's description names its tables"
    )
    _add_extras(p)


def _add_extras(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group(
        "saved beside the index (the default pipeline of `tabret query` uses what is there)"
    )
    g.add_argument(
        "--join-graph",
        nargs="?",
        const="compatibility",
        default="auto",
        choices=["auto", "compatibility", "keys", "none"],
        help="the join graph saved for greedy-join, jar-exact and --closure: foreign keys plus "
        "ω inferred for any column pairs (compatibility, the bare flag), the foreign keys only "
        "(keys: a sparse graph; with --keys inferred, the inferred key graph), or none; auto "
        "(default): compatibility where the databases hold at most 100 million column pairs "
        "(about 20 s of scoring), keys above",
    )
    g.add_argument(
        "--column-stats",
        action="store_true",
        help="with --join-graph and a sqlite or sqlalchemy SOURCE: read each column's "
        "uniqueness and sample values from the database for join inference",
    )
    g.add_argument(
        "--values",
        action="store_true",
        help="with a sqlite or sqlalchemy SOURCE: read each text column's distinct values (at "
        "most 1,000 per column, 100 bytes each, 64 MiB in all) and save them in INDEX_DIR for "
        "the values stage; they stay on this machine (tabret.values)",
    )
    g.add_argument(
        "--values-time-budget",
        type=float,
        metavar="SECONDS",
        default=None,
        help="stop reading values after this long, keeping what was read (default: no limit)",
    )
    g.add_argument(
        "--questions",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="generate one question per table and save them for reverse (default; "
        "--no-questions: none): a template question, or the --llm model's",
    )
    _llm.add_optional_arguments(p, "LLM (who writes --questions)", "a template question")


def command(args: argparse.Namespace) -> int:
    return run(
        IndexOptions(
            format=args.format,
            source=args.source,
            out=args.out,
            replace=args.replace,
            update=args.update,
            embedder=args.embedder,
            embedding_cache=args.embedding_cache,
            text=args.text,
            kind=args.kind,
            columns=not args.no_columns,
            quiet=args.quiet,
            identifiers=args.identifiers,
            abbreviations=args.abbreviations,
            keys=args.keys,
            families=args.families,
            copies=args.copies,
            join_graph=None if args.join_graph == "none" else args.join_graph,
            column_stats=args.column_stats,
            values=args.values,
            values_time_budget=args.values_time_budget,
            questions=args.questions,
            llm=_llm.choice(args),
        )
    )


def run(o: IndexOptions) -> int:
    from tabret.index import TableIndex

    _check(o)
    cat = understood(LOADERS[o.format](o.source), o.identifiers, o.keys, o.abbreviations)
    if o.families == "collapse":
        from tabret.families import collapse_families

        families = collapse_families(cat)
        print(f"table families: {families.summary()}")
        cat = families.catalog
    if o.copies == "collapse":
        from tabret.copies import collapse_copies

        copies = collapse_copies(cat)
        print(f"copies: {copies.summary()}")
        cat = copies.catalog
    embedder: Any = embedder_arg(o.embedder, o.quiet, o.embedding_cache)
    if o.update:
        embedder = _reusing_saved(o, embedder)
    values = _read_values(o, cat) if o.values else None
    index = TableIndex.build(
        cat,
        embedder,
        format=o.text,
        columns=o.columns,
        kind=o.kind,
        values=values,
        progress=not o.quiet,
    )
    with _llm.open_llm(o.llm, quiet=o.quiet) as live:
        graph, questions = _build_extras(o, cat, index, live.llm if live else None)
    index.save(o.out, join_graph=graph, questions=questions, replace=o.replace or o.update)
    if o.update:
        print(
            f"update: {embedder.embedded:,} new or changed texts embedded, "
            f"{embedder.hits:,} vectors reused from the index before"
        )
    searched = ", ".join(f"{part} {kind}" for part, kind in index.search_kinds.items())
    print(f"indexed {cat!r} with {index.embedder_name} ({o.kind}: {searched}) into {o.out}")
    if graph is not None:
        print(f"join graph: {len(graph):,} edges")
    if questions is not None:
        print(f"generated questions: {len(questions):,} ({questions.generator})")
    if values is not None:
        print(
            f"values: {len(values):,} in {values.columns_with_values:,} columns "
            f"({values.bytes:,} bytes)"
        )
    return 0


def _check(o: IndexOptions) -> None:
    """Rejects option combinations that cannot work, before anything is built."""
    if o.column_stats and not o.join_graph:
        raise ValueError("--column-stats only feeds the join graph: drop --join-graph none")
    if o.llm.answers and not o.questions:
        raise ValueError("--llm writes the generated questions: drop --no-questions")
    if o.column_stats and o.format not in ("sqlite", "sqlalchemy"):
        raise ValueError(
            f"--column-stats needs a live database (sqlite or sqlalchemy), not {o.format}"
        )
    if o.column_stats:
        _require_sqlalchemy()
    if o.values and o.format not in ("sqlite", "sqlalchemy"):
        raise ValueError(f"--values needs a live database (sqlite or sqlalchemy), not {o.format}")
    if o.values and "collapse" in (o.families, o.copies):
        raise ValueError(
            "--values reads the database's own tables: it cannot go with --families collapse "
            "or --copies collapse"
        )
    if o.values_time_budget is not None and not o.values:
        raise ValueError("--values-time-budget goes with --values")
    if o.values and o.format == "sqlalchemy":
        _require_sqlalchemy()


def _reusing_saved(o: IndexOptions, embedder: Any) -> CachedEmbedder:
    """--update: ``embedder`` holding the vectors saved in INDEX_DIR (its index's, join
    graph's and generated questions'), checked to have been built with these options before
    the catalog is embedded."""
    from tabret import _core
    from tabret.embedders import resolve_embedder
    from tabret.index import TableIndex, reusing
    from tabret.join import JoinGraph
    from tabret.reverse import GeneratedQuestions

    core, graph, questions, _, _ = _core.load_index(o.out, graph=True, questions=True)
    name = resolve_embedder(embedder)[1]
    asked = {"embedder": name, "text": o.text, "columns": o.columns, "kind": o.kind}
    saved = {
        "embedder": core.embedder_name,
        "text": core.format,
        "columns": core.has_columns,
        "kind": core.kind,
    }
    for option, value in asked.items():
        if saved[option] != value:
            flag = {"columns": "--no-columns"}.get(option, f"--{option}")
            raise ValueError(
                f"--update: {o.out} was built with {flag} {saved[option]!r}, not {value!r}: give "
                "the options it was built with, or drop --update for a full build"
            )
    before = TableIndex(core, embedder)
    built: list[Any] = [before]
    if graph is not None:
        built.append(JoinGraph(graph, before))
    if questions is not None:
        built.append(GeneratedQuestions(questions, before))
    return reusing(embedder, *built)


def _read_values(o: IndexOptions, cat: Catalog) -> ValueIndex:
    """--values: read before embedding, so a database that cannot be read fails first."""
    from tabret.values import read_values

    return read_values(cat, o.source, time_budget_s=o.values_time_budget, progress=not o.quiet)


def _require_sqlalchemy() -> None:
    """--column-stats reads the database through SQLAlchemy: said before minutes of embedding."""
    try:
        import sqlalchemy  # noqa: F401
    except ImportError as err:
        raise ImportError(
            "--column-stats reads the database through SQLAlchemy, which is not installed: "
            "pip install 'sqlalchemy>=2.0'"
        ) from err


def _build_extras(
    o: IndexOptions, cat: Catalog, index: TableIndex, llm: LLMLike | None
) -> tuple[JoinGraph | None, GeneratedQuestions | None]:
    """The join graph and the generated questions ``tabret index`` asked for, saved with it."""
    graph = questions = None
    if o.join_graph:
        from tabret.join import JoinGraph, automatic_graph, column_pairs

        kind = o.join_graph
        if kind == "auto":
            kind = automatic_graph(cat)
            if kind == "keys":
                print(
                    f"join graph: foreign keys only ({column_pairs(cat):,} column pairs within "
                    "databases would take long to score; --join-graph compatibility scores them)"
                )
        stats = None
        if o.column_stats:
            stats = _live_column_stats(o, cat)
            print(f"column statistics: {stats.known:,} of {len(stats):,} columns have values")
        graph = JoinGraph.build(
            index, stats, progress=not o.quiet, infer_compatibility=kind != "keys"
        )
    if o.questions:
        from tabret.reverse import GeneratedQuestions

        if llm is None:
            questions = GeneratedQuestions.build(index, progress=not o.quiet)
        else:
            questions = GeneratedQuestions.build(index, llm, progress=not o.quiet)
    return graph, questions


def _live_column_stats(o: IndexOptions, cat: Catalog) -> ColumnStats:
    """--column-stats: a sqlalchemy SOURCE is the user's URL; a sqlite SOURCE is exactly the
    named file, opened read-only (never a ``sqlite:///`` URL built from the name)."""
    from tabret.join import column_stats_from_database

    if o.format == "sqlalchemy":
        return column_stats_from_database(cat, o.source, cat.databases[0].name)
    from tabret._sqlalchemy import sqlite_engine

    engine = sqlite_engine(o.source)
    try:
        return column_stats_from_database(cat, engine, cat.databases[0].name)
    finally:
        engine.dispose()
