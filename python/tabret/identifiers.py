"""Identifier understanding: concatenated identifiers split into words.

``ACCOUNTHOLDERNAME`` and ``invoicelines`` embed as one unknown token each; their natural names
``account holder name`` and ``invoice lines`` embed as words. :func:`segment_names` re-derives
every natural name that the schema did not give (derived from the identifier, or equal to it)
with a :class:`WordSegmenter` (C++: ``tabret::word_segmenter``), keeping ids, keys, types and
descriptions. The default word list is wordninja's (126k English words, most frequent first;
a dependency of tabret); any frequency-ordered list works.

:func:`expand_abbreviations` re-writes the same derived names with abbreviations expanded
(``cust acct qty`` -> customer account quantity; C++: ``tabret::with_expanded_abbreviations``):
from a dictionary (:func:`default_abbreviations`, or the caller's) and from what each database
teaches (:func:`learned_abbreviations`: a rare token that is a prefix or a vowel-less
contraction of exactly one word of the database's names).
"""

from __future__ import annotations

import gzip
import importlib.util
import json
import os
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from tabret import _core
from tabret.catalog import Catalog

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

__all__ = [
    "WordSegmenter",
    "default_abbreviations",
    "default_segmenter",
    "expand_abbreviations",
    "learned_abbreviations",
    "learned_by_database",
    "read_abbreviations",
    "segment_names",
    "word_list",
]

WordSegmenter = _core.WordSegmenter

WORD_LIST = "wordninja/wordninja_words.txt.gz"  # beside wordninja.py in site-packages


@cache
def word_list() -> tuple[str, ...]:
    """wordninja's word list, most frequent first. :class:`ImportError` without wordninja."""
    spec = importlib.util.find_spec("wordninja")
    if spec is None or spec.origin is None:
        raise ImportError(
            "splitting identifiers into words needs the word list of the 'wordninja' package, "
            "a dependency of tabret that is missing here: pip install 'wordninja>=2'"
        )
    path = Path(spec.origin).parent / WORD_LIST
    with gzip.open(path, "rt", encoding="utf-8") as f:
        words = tuple(line.strip().lower() for line in f if line.strip())
    if not words:
        raise ValueError(f"{path}: empty word list")
    return words


@cache
def default_segmenter() -> WordSegmenter:
    """A segmenter over :func:`word_list` with the default options."""
    return WordSegmenter(list(word_list()))


def segment_names(catalog: _core.Catalog, segmenter: WordSegmenter | None = None) -> Catalog:
    """``catalog`` with the natural names it derived (or that equal the identifier) split into
    words by ``segmenter`` (default: :func:`default_segmenter`); given names are kept."""
    return Catalog(_core.with_segmented_names(catalog, segmenter or default_segmenter()))


def split(token: str, words: Sequence[str] | None = None) -> list[str]:
    """``token`` split by a segmenter over ``words`` (default: :func:`word_list`)."""
    seg = default_segmenter() if words is None else WordSegmenter(list(words))
    return list(seg.split(token))


def default_abbreviations() -> dict[str, str]:
    """The built-in dictionary (a copy): unambiguous schema abbreviations, lower-case token ->
    expansion (``qty`` -> quantity, ``dob`` -> date of birth); listed in
    ``include/tabret/text/abbreviations.hpp``. Ambiguous ones (``inv``, ``temp``, ``stat``,
    ``no``, ``id`` ...) are left out."""
    return dict(_core.default_abbreviations())


def _words(words: WordSegmenter | Sequence[str] | None) -> WordSegmenter:
    """The common-word check of learning: ``words``, or the default segmenter's list."""
    if words is None:
        return default_segmenter()  # ImportError without wordninja
    return words if isinstance(words, WordSegmenter) else WordSegmenter(list(words))


def _dictionary(dictionary: Mapping[str, str] | None) -> dict[str, str]:
    if dictionary is None:
        return dict(_core.default_abbreviations())
    return {k.lower(): v.lower() for k, v in dictionary.items()}


def learned_abbreviations(
    catalog: _core.Catalog,
    database: int,
    dictionary: Mapping[str, str] | None = None,
    *,
    words: WordSegmenter | Sequence[str] | None = None,
) -> dict[str, str]:
    """What database ``database`` of ``catalog`` teaches: token -> the one word it abbreviates
    there (the rules: ``tabret::learned_abbreviations``). Keys of ``dictionary`` (default:
    :func:`default_abbreviations`) are not learned; ``words`` (a :class:`WordSegmenter` or a
    frequency-ordered list; default: :func:`word_list`, :class:`ImportError` without wordninja)
    tells common English words, which are never learned."""
    return dict(
        _core.learned_abbreviations(catalog, database, _dictionary(dictionary), _words(words))
    )


def learned_by_database(
    catalog: _core.Catalog,
    dictionary: Mapping[str, str] | None = None,
    *,
    words: WordSegmenter | Sequence[str] | None = None,
) -> dict[str, dict[str, str]]:
    """Database name -> what it teaches (:func:`learned_abbreviations`), for the databases that
    teach something: what ``--identifiers expand`` will rewrite beyond ``dictionary``
    (``tabret catalog --show-abbreviations`` prints it)."""
    segmenter = _words(words)
    taught = {
        db.name: learned_abbreviations(catalog, i, dictionary, words=segmenter)
        for i, db in enumerate(catalog.databases)
    }
    return {name: learned for name, learned in taught.items() if learned}


def read_abbreviations(path: str | os.PathLike[str]) -> dict[str, str]:
    """The abbreviations of the JSON file ``path`` (``--abbreviations``): one object, token ->
    expansion, lower-cased. Passed with the built-in dictionary
    (``default_abbreviations() | read_abbreviations(path)``), each entry wins over the
    dictionary and over what a database teaches, as dictionary keys are never learned: map a
    token to itself to keep it as written (``{"ext": "ext"}``). :class:`ValueError` naming the
    file (and the entry) for anything else."""
    name = os.fspath(path)
    try:
        with open(name, encoding="utf-8-sig") as f:
            data = json.load(f)
    except json.JSONDecodeError as err:
        raise ValueError(f"{name}:{err.lineno}: not JSON: {err.msg}") from err
    except UnicodeDecodeError as err:
        raise ValueError(f"{name}: not UTF-8 text ({err.reason} at byte {err.start})") from err
    if not isinstance(data, dict):
        raise ValueError(f'{name}: abbreviations are one JSON object {{"token": "expansion"}}')
    for token, expansion in data.items():
        if not isinstance(expansion, str) or not token.strip() or not expansion.strip():
            raise ValueError(f"{name}: entry '{token}': a token and its expansion, both words")
    return {k.strip().lower(): v.strip().lower() for k, v in data.items()}


def expand_abbreviations(
    catalog: _core.Catalog,
    dictionary: Mapping[str, str] | None = None,
    *,
    learn: bool = True,
    words: WordSegmenter | Sequence[str] | None = None,
) -> Catalog:
    """``catalog`` with abbreviations expanded in the natural names it derived (from the
    identifier, equal to it, or a word segmentation of it, as :func:`segment_names` writes
    them); names the schema gives are kept, and ids, keys, types, descriptions and constraints
    are unchanged.

    Each word of such a name that is a key of ``dictionary`` becomes its value; ``None`` takes
    :func:`default_abbreviations`, and a dictionary given here *replaces* it (pass
    ``default_abbreviations() | mine`` to extend it). With ``learn``, each remaining word that
    the database teaches (:func:`learned_abbreviations`) becomes its expansion; learning checks
    tokens against common English words in ``words`` (default: :func:`word_list`, so it needs
    wordninja: :class:`ImportError` without it). ``learn=False`` needs no word list.
    """
    segmenter = _words(words) if learn else None
    return Catalog(
        _core.with_expanded_abbreviations(catalog, _dictionary(dictionary), segmenter, learn=learn)
    )
