"""Identifier understanding: concatenated identifiers split into words.

``ACCOUNTHOLDERNAME`` and ``invoicelines`` embed as one unknown token each; their natural names
``account holder name`` and ``invoice lines`` embed as words. :func:`segment_names` re-derives
every natural name that the schema did not give (derived from the identifier, or equal to it)
with a :class:`WordSegmenter` (C++: ``tabret::word_segmenter``), keeping ids, keys, types and
descriptions. The default word list is wordninja's (126k English words, most frequent first;
``pip install 'tabret[identifiers]'``); any frequency-ordered list works.
"""

from __future__ import annotations

import gzip
import importlib.util
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from tabret import _core
from tabret.catalog import Catalog

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["WordSegmenter", "default_segmenter", "segment_names", "word_list"]

WordSegmenter = _core.WordSegmenter

WORD_LIST = "wordninja/wordninja_words.txt.gz"  # beside wordninja.py in site-packages


@cache
def word_list() -> tuple[str, ...]:
    """wordninja's word list, most frequent first. :class:`ImportError` without wordninja."""
    spec = importlib.util.find_spec("wordninja")
    if spec is None or spec.origin is None:
        raise ImportError(
            "splitting identifiers into words needs the word list of the 'wordninja' package: "
            "pip install 'tabret[identifiers]' (or wordninja)"
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
