"""Copies (issue 22): one physical table registered under several databases, found by qualified
name and columns, scored as the gold table (`--score-copies`) or collapsed to one table for
retrieval (`--copies collapse`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tabret import Catalog
from tabret.benchmarks import Benchmark, BenchmarkQuestion
from tabret.cli import main
from tabret.copies import collapse_copies, copies_as_gold, find_copies
from tabret.eval import evaluate
from tabret.families import collapse_benchmark, collapse_families
from tabret.results import Retrieval, ScoredTable

ACS = "pub.census.acs_2020"


def _warehouse() -> Catalog:
    """census and health both register pub.census.acs_2020 (same columns); health's
    pub.census.zip has one column more than census's; each has a bare `users` table."""
    cat = Catalog()
    for db, extra in [("census", []), ("health", ["zip4"]), ("sales", [])]:
        d = cat.add_database(db)
        if db != "sales":
            name = ACS if db == "census" else ACS.upper()
            acs = cat.add_table(d, name, description=f"acs in {db}")
            for c in ["geo_id", "Population"] if db == "census" else ["GEO_ID", "population"]:
                cat.add_column(acs, c, "INT")
            z = cat.add_table(d, "pub.census.zip")
            for c in ["zip", *extra]:
                cat.add_column(z, c)
        users = cat.add_table(d, "users")
        cat.add_column(users, "id")
    return cat


def _id(cat: Catalog, db: str, name: str) -> int:
    t = cat.find_table(db, name)
    assert t is not None, name
    return t


def _bench(cat: Catalog, gold: list[tuple[str, str]], db: str = "health") -> Benchmark:
    q = BenchmarkQuestion("q0", db, "population", tuple(_id(cat, d, n) for d, n in gold))
    return Benchmark("toy", cat, [q], "toy gold")


def test_copies_need_a_qualified_name_and_the_same_columns() -> None:
    cat = _warehouse()
    found = find_copies(cat)
    # case-insensitive names and columns; not the zips (columns differ), not users (bare name)
    assert [(f.name, f.members) for f in found] == [
        (ACS, (_id(cat, "census", ACS), _id(cat, "health", ACS)))
    ]


def test_collapsed_copies_are_one_table_in_the_first_database() -> None:
    cat = _warehouse()
    fam = collapse_copies(cat)
    assert (cat.num_tables, fam.catalog.num_tables) == (7, 6)
    acs = fam.family_of[_id(cat, "health", ACS)]
    assert acs == fam.family_of[_id(cat, "census", ACS)]
    table = fam.catalog.table(acs)
    # the first member as it is: no shard description, no digit run stripped from the name
    assert (table.name, table.nl_name, table.description) == (
        ACS,
        cat.table(_id(cat, "census", ACS)).nl_name,
        "acs in census",
    )
    assert fam.catalog.database(table.database).name == "census"
    assert fam.comment(acs) == f"-- {ACS} is one table registered in 2 databases: census, health"
    assert fam.comment(fam.family_of[_id(cat, "sales", "users")]) == ""
    # shards are still shards: a copy rule does not change what find_families does
    assert not collapse_families(cat).num_families


def test_copies_as_gold_scores_another_databases_copy_as_found() -> None:
    cat = _warehouse()
    bench = _bench(cat, [("health", ACS), ("health", "users")])
    census_acs = _id(cat, "census", ACS)
    ranked = [census_acs, _id(cat, "health", "users")]

    def retrieve(questions: list[str], k: int) -> list[Retrieval]:
        return [Retrieval(q, [ScoredTable(t, "", 1.0) for t in ranked[:k]]) for q in questions]

    strict = evaluate(retrieve, bench, ks=[2], progress=False)
    scored = copies_as_gold(bench)
    assert scored.questions[0].families == ((_id(cat, "health", ACS), census_acs),)
    assert "1 of 1 questions read a table with copies" in scored.source
    found = evaluate(retrieve, scored, ks=[2], progress=False)
    assert (strict.complete_recall[2], found.complete_recall[2]) == (0.0, 100.0)
    # a question that names both copies keeps both as gold
    both = copies_as_gold(_bench(cat, [("health", ACS), ("census", ACS)]))
    assert both.questions[0].families == ()


def test_collapsed_benchmark_maps_gold_onto_the_copy() -> None:
    cat = _warehouse()
    bench = collapse_benchmark(_bench(cat, [("health", ACS)]), collapse_copies(cat))
    fam_acs = bench.catalog.find_table("census", ACS)
    assert bench.questions[0].gold_tables == (fam_acs,)
    assert bench.catalog.find_table("health", ACS) is None


def test_copies_refused_per_database() -> None:
    from dataclasses import replace

    bench = replace(_bench(_warehouse(), [("health", ACS)]), per_database=True)
    with pytest.raises(ValueError, match="own database"):
        copies_as_gold(bench)


def test_cli_eval_copies(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    catalog = tmp_path / "warehouse.json"
    _warehouse().save_json(catalog)
    questions = tmp_path / "mine.jsonl"
    line = {"question": "population by geo id", "db": "sales", "gold_tables": [f"health.{ACS}"]}
    questions.write_text(json.dumps(line) + "\n", encoding="utf-8")
    argv = ["eval", "--questions", str(questions), "--catalog", str(catalog)]
    argv += ["--embedder", "hashing", "--quiet", "--k", "1", "--method", "bm25"]
    assert main([*argv, "--copies", "collapse"]) == 0
    out = capsys.readouterr().out
    assert "copies collapsed: 7 tables -> 6 (1 copy group of 2 tables)" in out
    assert main([*argv, "--score-copies"]) == 0
    assert "1 of 1 questions read a table with copies" in capsys.readouterr().out


def test_spider2_lite_copies(data_dir: Path) -> None:
    pytest.importorskip("sqlglot")
    from tabret.benchmarks import spider2_lite

    bench = spider2_lite(data_dir)
    fam = collapse_copies(bench.catalog)
    assert fam.summary() == "8,255 tables -> 6,428 (1,059 copy groups of 2,886 tables)"
    cat = bench.catalog
    acs = [f for f in find_copies(cat) if len(f.members) == 4]
    assert any(
        {cat.database(cat.table(t).database).name for t in f.members}
        == {"census_bureau_acs_1", "covid19_usa", "fec", "sdoh"}
        for f in acs
    )
    scored = copies_as_gold(bench)
    assert "49 of 248 questions read a table with copies" in scored.source
