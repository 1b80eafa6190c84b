"""What several subcommands share: schema loaders, embedders and argument groups."""

from __future__ import annotations

import argparse
import functools
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Literal, get_args

from tabret.adaptive import ThresholdRule
from tabret.catalog import Catalog
from tabret.index import DEFAULT_TABLE_FORMAT, TableFormat

if TYPE_CHECKING:
    from tabret import CachedEmbedder
    from tabret.rerank import CrossEncoderScorer


LOADERS: dict[str, Callable[[str], Catalog]] = {
    "spider": Catalog.from_spider_json,
    "ddl": Catalog.from_ddl,
    "sqlite": Catalog.from_sqlite,
    "json": Catalog.from_json,
    "sqlalchemy": Catalog.from_sqlalchemy,
    "duckdb": Catalog.from_duckdb,
    "dbt": Catalog.from_dbt,
    "information-schema": Catalog.from_information_schema,
}


#: Where an option is added: a parser or one of its argument groups.
Options = argparse._ActionsContainer


def positive_int(text: str) -> int:
    """An argparse type: an integer of at least 1 (a count of tables or questions)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def add_number(
    g: Options, flag: str, kind: type[int] | type[float], default: float, help: str
) -> None:
    """An int or float option whose help ends with its default: ``help (default: …)``."""
    g.add_argument(flag, type=kind, default=default, help=f"{help} (default: %(default)s)")


def add_choice(g: Options, flag: str, choices: Sequence[str], default: object, help: str) -> None:
    """An option that takes one of ``choices`` (``default`` when not given)."""
    g.add_argument(flag, default=default, choices=choices, help=help)


def add_switch(g: Options, flag: str, help: str) -> None:
    """An on/off flag (``store_true``)."""
    g.add_argument(flag, action="store_true", help=help)


def add_source_arguments(p: argparse.ArgumentParser) -> None:
    """FORMAT SOURCE, shared by `catalog` and `index`."""
    p.add_argument("format", choices=sorted(LOADERS), help="what SOURCE is")
    p.add_argument(
        "source",
        help="file path, or a SQLAlchemy URL for 'sqlalchemy'; for 'dbt' a manifest.json or a "
        "dbt target/ directory (manifest.json, and catalog.json when there); for "
        "'information-schema' a COLUMNS export (.csv, .json, .jsonl) or a directory holding "
        "columns.<suffix> and keys.<suffix>",
    )


def add_reranker_argument(p: Options) -> None:
    """--reranker, shared by `query`, `eval` and `serve`."""
    p.add_argument(
        "--reranker",
        metavar="DIR",
        help="a cross-encoder (`tabret train --cross-encoder`): the scorer of the rerank stage "
        "(--pipeline '… > rerank'), and adaptive's window scorer (threshold logit 0) instead of "
        "the similarity rule",
    )


@functools.cache
@functools.cache
def load_reranker(path: str) -> CrossEncoderScorer:
    """The cross-encoder in ``path``, loaded once per process (every stage and request that
    uses it shares the one model)."""
    from tabret.rerank import CrossEncoderScorer

    return CrossEncoderScorer(path)


def add_embedding_arguments(p: argparse.ArgumentParser, text_flag: str) -> None:
    """--embedder, --embedding-cache and the table serialisation flag, shared by `index` and
    `eval`."""
    p.add_argument(
        "--embedder",
        default="all-MiniLM-L6-v2",
        help="'hashing' (built-in, no model) or a sentence-transformers model name/path, such "
        "as a directory `tabret train` wrote (default: all-MiniLM-L6-v2, offline)",
    )
    p.add_argument(
        "--embedding-cache",
        metavar="DIR",
        help="keep every embedding in DIR and reuse it in later runs (same embedder name): "
        "only texts not embedded before are embedded (tabret.DiskCachedEmbedder)",
    )
    p.add_argument(
        text_flag,
        default=DEFAULT_TABLE_FORMAT,
        choices=get_args(TableFormat),
        help=f"table serialisation that is embedded (default: {DEFAULT_TABLE_FORMAT}). "
        "signature: db.table(cols); related: the signature, then the tables its foreign keys "
        "reference and the tables that reference it (the signature where there are no keys); "
        "described: the signature, then the table's and columns' descriptions, and column "
        "vectors get the column's",
    )


def add_threshold_rule(
    g: argparse._ArgumentGroup, default: ThresholdRule, *, several: bool, help: str
) -> None:
    """--threshold-rule, the one definition: `eval` takes several rules (one adaptive row
    each), `query` one; each command passes its own default."""
    g.add_argument(
        "--threshold-rule",
        nargs="+" if several else None,
        default=[default] if several else default,
        choices=get_args(ThresholdRule),
        help=help,
    )


Identifiers = Literal["declared", "split", "expand"]
Keys = Literal["declared", "inferred", "both"]
FamiliesChoice = Literal["off", "collapse"]
CopiesChoice = Literal["off", "collapse"]


def add_catalog_arguments(p: argparse.ArgumentParser, families_help: str) -> None:
    """How the catalog is understood before indexing: --identifiers, --keys, --families,
    --copies."""
    p.add_argument(
        "--identifiers",
        default="declared",
        choices=list(get_args(Identifiers)),
        help="natural names as the catalog derives them (declared, default), with "
        "concatenated words split (split: `invoicelines` -> invoice lines), or split and "
        "abbreviations expanded (expand: `cust_acct_qty` -> customer account quantity, from a "
        "built-in dictionary and what each database's names teach); split and expand need "
        "wordninja (tabret.identifiers); names the schema gives are kept either way",
    )
    p.add_argument(
        "--abbreviations",
        metavar="FILE.json",
        help="with --identifiers expand: a JSON object {token: expansion} that extends the "
        "built-in dictionary and wins over what the databases teach; map a token to itself "
        '({"ext": "ext"}) to keep it. `tabret catalog SOURCE --show-abbreviations` shows '
        "what each database teaches",
    )
    p.add_argument(
        "--keys",
        default="declared",
        choices=list(get_args(Keys)),
        help="the catalog's keys: as declared (default); inferred: declared keys hidden and "
        "foreign keys inferred from column names instead (what a catalog without keys gets; "
        "tabret.keys); both: declared plus inferred. Join-aware methods and the closure use "
        "them (with --join-graph keys: them only)",
    )
    p.add_argument(
        "--families",
        default="off",
        choices=list(get_args(FamiliesChoice)),
        help="table families (shards such as ga_sessions_20160801 … with the same columns): "
        "each table on its own (off, default), or each family as one table (collapse; "
        f"tabret.families){families_help}",
    )
    p.add_argument(
        "--copies",
        default="off",
        choices=list(get_args(CopiesChoice)),
        help="one table registered under several databases (same qualified name such as "
        "project.dataset.table, same columns): each copy on its own (off, default), or each "
        "group as one table in its first database (collapse; tabret.copies; after --families)"
        f"{families_help}",
    )


def understood(
    catalog: Catalog, identifiers: Identifiers, keys: Keys, abbreviations: str | None = None
) -> Catalog:
    """``catalog`` with --identifiers split (words of concatenated identifiers) or expand (split,
    then abbreviations expanded, the built-in dictionary extended by --abbreviations' file) and
    --keys (foreign keys inferred from names instead of the declared ones, or beside them)."""
    if abbreviations is not None and identifiers != "expand":
        raise ValueError("--abbreviations only feeds --identifiers expand")
    if identifiers in ("split", "expand"):
        from tabret.identifiers import segment_names

        catalog = segment_names(catalog)
        if identifiers == "expand":
            catalog = _expanded(catalog, abbreviations)
    if keys != "declared":
        from tabret.keys import catalog_without_keys, infer_foreign_keys, with_foreign_keys

        base = catalog_without_keys(catalog) if keys == "inferred" else catalog
        catalog = with_foreign_keys(base, infer_foreign_keys(base))
    return catalog


def abbreviation_dictionary(path: str | None) -> dict[str, str]:
    """The built-in abbreviations, extended by --abbreviations' file when given."""
    from tabret.identifiers import default_abbreviations, read_abbreviations

    return default_abbreviations() | (read_abbreviations(path) if path else {})


def _expanded(catalog: Catalog, abbreviations: str | None) -> Catalog:
    """--identifiers expand, saying how many words the databases taught (a learned expansion
    can be wrong: `tabret catalog --show-abbreviations` lists them, --abbreviations overrides)."""
    from tabret.identifiers import expand_abbreviations, learned_by_database

    dictionary = abbreviation_dictionary(abbreviations)
    taught = learned_by_database(catalog, dictionary)
    if taught:
        pairs = [f"{t} -> {w}" for learned in taught.values() for t, w in learned.items()]
        shown = ", ".join(pairs[:5]) + (", …" if len(pairs) > 5 else "")
        print(
            f"abbreviations learned from the names: {len(pairs)} in {len(taught)} databases "
            f"({shown}); all of them: tabret catalog SOURCE --show-abbreviations; "
            "to override: --abbreviations FILE.json",
            file=sys.stderr,
        )
    return expand_abbreviations(catalog, dictionary)


def embedder_arg(name: str, quiet: bool = False, cache: str | None = None) -> object:
    """The embedder a command line names; ``quiet``: no model-loading bar; ``cache``: behind
    a :class:`~tabret.DiskCachedEmbedder` in that directory (--embedding-cache)."""
    from tabret.embedders import HashingEmbedder, SentenceTransformerEmbedder

    embedder: HashingEmbedder | SentenceTransformerEmbedder = (
        HashingEmbedder()
        if name == "hashing"
        else SentenceTransformerEmbedder(name, progress=not quiet)
    )
    if not cache:
        return embedder
    from tabret.embedding_cache import DiskCachedEmbedder

    return DiskCachedEmbedder(embedder, cache)


def memo(embedder: Any) -> CachedEmbedder:
    """``embedder`` behind an in-memory text -> vector cache, under the same name."""
    from tabret import CachedEmbedder, HashingEmbedder

    inner = embedder if isinstance(embedder, HashingEmbedder) else embedder.embed
    return CachedEmbedder(inner, embedder.name)
