"""Prompt tokens of retrieved tables (tabret.tokens, `tabret eval --prompt-tokens`)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tabret import Catalog
from tabret.benchmarks import database_benchmarks, load_benchmark
from tabret.embedders import HashingEmbedder
from tabret.eval import evaluate, format_table, merge_results
from tabret.index import DenseRetriever, TableIndex
from tabret.tokens import SchemaTokens, gemma_token_counter


def _words(text: str) -> int:
    return len(text.split())


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    cat = Catalog()
    db = cat.add_database("shop")
    customer = cat.add_table(db, "customer")
    cat.add_column(customer, "customer_id", "integer")
    cat.add_column(customer, "name", "text")
    order = cat.add_table(db, "orders")
    cat.add_column(order, "order_id", "integer")
    cat.add_column(order, "customer_id", "integer")
    cat.add_column(order, "total", "real")
    return cat


def test_a_table_costs_the_tokens_of_its_ddl_counted_once(catalog: Catalog) -> None:
    seen: list[str] = []

    def count(text: str) -> int:
        seen.append(text)
        return _words(text)

    tokens = SchemaTokens(catalog, count)
    ddl = [catalog.serialize_table(t, format="ddl", names="original") for t in (0, 1)]
    assert tokens.table(1) == _words(ddl[1])
    assert tokens.tables([0, 1, 1]) == _words(ddl[0]) + 2 * _words(ddl[1])
    assert seen == [ddl[1], ddl[0]]  # each table's text counted once
    assert repr(tokens) == "SchemaTokens(2 of 2 tables counted)"


@pytest.mark.parametrize("bad", [-1, 2.5, "7", None, True])
def test_a_counter_returning_no_count_is_an_error_naming_the_table(
    catalog: Catalog, bad: object
) -> None:
    tokens = SchemaTokens(catalog, lambda _: bad)  # type: ignore[arg-type,return-value]
    with pytest.raises(TypeError, match=r"non-negative int, got .* for table shop\.orders"):
        tokens.table(1)


def test_evaluate_reports_the_mean_tokens_of_the_tables_returned_at_each_k() -> None:
    bench = load_benchmark("demo")
    index = TableIndex.build(bench.catalog, HashingEmbedder(), progress=False)
    retriever = DenseRetriever(index)
    tokens = SchemaTokens(bench.catalog, _words)
    res = evaluate(retriever.retrieve, bench, (3, 10), progress=False, tokens=tokens)
    ranked = [row["ranked"] for row in res.per_question]
    for k in (3, 10):
        expected = sum(tokens.tables(rk[:k]) for rk in ranked) / len(ranked)
        assert res.prompt_tokens[k] == pytest.approx(expected)
    assert 0 < res.prompt_tokens[3] < res.prompt_tokens[10]
    assert "tok@3" in format_table([res])
    plain = evaluate(retriever.retrieve, bench, (3,), progress=False)
    assert plain.prompt_tokens == {}
    assert "tok@" not in format_table([plain])
    with pytest.raises(ValueError, match="level='table'"):
        evaluate(retriever.retrieve, bench, (3,), level="column", progress=False, tokens=tokens)


def test_per_database_parts_merge_their_tokens_weighted_by_questions() -> None:
    bench = load_benchmark("demo")
    parts = []
    for part in database_benchmarks(bench):
        index = TableIndex.build(part.catalog, HashingEmbedder(), progress=False)
        tokens = SchemaTokens(part.catalog, _words)
        parts.append(
            evaluate(DenseRetriever(index).retrieve, part, (3,), progress=False, tokens=tokens)
        )
    merged = merge_results(parts, bench)
    n = sum(p.questions for p in parts)
    expected = sum(p.prompt_tokens[3] * p.questions for p in parts) / n
    assert merged.prompt_tokens[3] == pytest.approx(expected)


def _local_llm_missing() -> str:
    try:
        gemma_token_counter()
    except ImportError as err:
        if os.environ.get("CI") == "true":
            raise RuntimeError(f"the tokenizer test must run under CI: {err}") from err
        return str(err)
    return ""


def test_gemma_counts_real_tokens() -> None:
    missing = _local_llm_missing()
    if missing:
        pytest.skip(missing)
    count = gemma_token_counter()
    assert count("") == 0
    one = count("CREATE TABLE customer (customer_id integer);")
    assert 5 <= one <= 20  # subword tokens: fewer than characters, more than words
    assert count("CREATE TABLE customer (customer_id integer);\n" * 10) >= 10 * one - 10


EVAL = [sys.executable, "-m", "tabret", "eval", "--benchmark", "demo", "--embedder", "hashing"]


def test_cli_prints_tok_columns() -> None:
    if _local_llm_missing():
        pytest.skip("needs the local-llm extra")
    out = subprocess.run(
        [*EVAL, "--k", "3", "5", "--quiet", "--prompt-tokens"],
        capture_output=True,
        text=True,
        check=True,
    )
    head = next(line for line in out.stdout.splitlines() if line.startswith("| data"))
    assert head.endswith("| tok@3 | tok@5 |")
    assert "llama" not in out.stderr  # no llama.cpp log lines
    bad = subprocess.run(
        [*EVAL, "--level", "column", "--quiet", "--prompt-tokens"],
        capture_output=True,
        text=True,
    )
    assert bad.returncode != 0
    assert "--prompt-tokens" in bad.stderr
