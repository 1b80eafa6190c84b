"""What retrieved tables cost in an LLM's prompt: tokens of their schema text.

Recall at a bigger k is cheap to buy and expensive to use: every table returned is schema text
the text-to-SQL model must read. :class:`SchemaTokens` counts, with a real tokenizer, the tokens
of each table's ``CREATE TABLE`` text as :meth:`tabret.Retrieval.to_prompt` writes it
(``format="ddl"``, original names), once per table; the cost of a list of tables is the sum
(``to_prompt``'s ``-- database:`` lines and blank separators are not counted).

The default tokenizer is the bundled Gemma 3 model's (a 262k-entry SentencePiece vocabulary, read
from its GGUF file by llama-cpp-python without loading the weights: the ``local-llm`` extra).
Any ``str -> int`` callable can stand in for it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable

from tabret import _core

__all__ = ["SchemaTokens", "TokenCounter", "gemma_token_counter"]

TokenCounter = Callable[[str], int]


def gemma_token_counter(model: str | os.PathLike[str] | None = None) -> TokenCounter:
    """Counts tokens with the tokenizer of a GGUF model (default: the bundled Gemma 3 270M),
    without the beginning-of-text token. Raises ``ImportError`` naming the ``local-llm`` extra
    when llama-cpp-python (or the bundled model) is missing."""
    from tabret.local_llm import bundled_model, require_local_llm

    require_local_llm(model_package=model is None)
    import llama_cpp
    from llama_cpp._internals import LlamaModel  # what llama_cpp.Llama tokenizes with

    path = str(model) if model is not None else str(bundled_model())
    params = llama_cpp.llama_model_default_params()
    params.vocab_only = True  # the vocabulary only: no weights, no context
    vocab = LlamaModel(path_model=path, params=params, verbose=False)

    def count(text: str) -> int:
        return len(vocab.tokenize(text.encode("utf-8"), add_bos=False, special=False))

    count.__name__ = f"tokens of {os.path.basename(path)}"
    return count


class SchemaTokens:
    """Tokens of each table's prompt schema text (``CREATE TABLE …``) of one catalog, counted
    once per table with ``count``."""

    def __init__(self, catalog: _core.Catalog, count: TokenCounter) -> None:
        self.catalog = catalog
        self._count = count
        self._tokens: dict[int, int] = {}

    def table(self, table: int) -> int:
        """The tokens of one table's DDL."""
        if table not in self._tokens:
            text = self.catalog.serialize_table(table, format="ddl", names="original")
            n = self._count(text)
            if not isinstance(n, int) or isinstance(n, bool) or n < 0:
                raise TypeError(
                    f"the token counter must return a non-negative int, got {n!r} "
                    f"for table {self.catalog.qualified_name(table)}"
                )
            self._tokens[table] = n
        return self._tokens[table]

    def tables(self, tables: Iterable[int]) -> int:
        """The tokens of the DDL of ``tables`` together."""
        return sum(self.table(t) for t in tables)

    def __repr__(self) -> str:
        return f"SchemaTokens({len(self._tokens)} of {self.catalog.num_tables} tables counted)"
