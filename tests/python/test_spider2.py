"""Spider 2.0-lite: gold tables from gold SQL (sqlglot), the benchmark's counts, the
per-database setting, and `tabret eval --questions FILE --catalog FILE`."""

from __future__ import annotations

import gzip
import json
from dataclasses import replace
from pathlib import Path

import pytest

from tabret import Catalog, FileError, HashingEmbedder, ParseError, SchemaError
from tabret.benchmarks import (
    Benchmark,
    BenchmarkQuestion,
    database_benchmarks,
    demo,
    questions_benchmark,
    spider2_lite,
    with_documents,
    with_knowledge,
)
from tabret.cli import main
from tabret.datasets import demo_catalog
from tabret.eval import evaluate, merge_results
from tabret.index import DenseRetriever, TableIndex
from tabret.results import Retrieval, ScoredTable
from tabret.spider2 import gold_tables, knowledge_documents, question_knowledge, sql_table_names

# Real gold SQL of Spider 2.0-lite (xlang-ai/Spider2, MIT), verbatim.
SF_BQ377 = """WITH json_files AS (
  SELECT
    c."id",
    TRY_PARSE_JSON(c."content"):"require" AS "dependencies"
  FROM
    GITHUB_REPOS.GITHUB_REPOS.SAMPLE_CONTENTS c
),
package_names AS (
  SELECT
    f.key AS "package_name"
  FROM
    json_files,
    LATERAL FLATTEN(input => "dependencies") AS f
)
SELECT
  "package_name",
  COUNT(*) AS "count"
FROM
  package_names
WHERE
  "package_name" IS NOT NULL
GROUP BY
  "package_name"
ORDER BY
  "count" DESC;
"""

BQ357 = """WITH DailyAverages AS (
    SELECT
        year, month, day, latitude, longitude,
        AVG(wind_speed) AS avg_wind_speed,
    FROM
        `bigquery-public-data.noaa_icoads.icoads_core_*`
    WHERE
        _TABLE_SUFFIX BETWEEN '2005' AND '2015'
    GROUP BY
        year, month, day, latitude, longitude
)
SELECT
    year, month, day, latitude, longitude,
    avg_wind_speed,

FROM
    DailyAverages
WHERE
    avg_wind_speed IS NOT NULL

ORDER BY avg_wind_speed DESC LIMIT 5
"""

LOCAL029 = """WITH customer_orders AS (
    SELECT
        c.customer_unique_id,
        COUNT(o.order_id) AS Total_Orders_By_Customers,
        AVG(p.payment_value) AS Average_Payment_By_Customer,
        c.customer_city,
        c.customer_state
    FROM olist_customers c
    JOIN olist_orders o ON c.customer_id = o.customer_id
    JOIN olist_order_payments p ON o.order_id = p.order_id
    WHERE o.order_status = 'delivered'
    GROUP BY c.customer_unique_id, c.customer_city, c.customer_state
)

SELECT
    Average_Payment_By_Customer,
    customer_city,
    customer_state
FROM customer_orders
ORDER BY Total_Orders_By_Customers DESC
LIMIT 3;
"""

BQ413 = """SELECT
   COALESCE(p.journal.title, p.proceedings_title.preferred, p.book_title.preferred, \
p.book_series_title.preferred) AS venue,
FROM
   `bigquery-public-data.dimensions_ai_covid19.publications` p
LEFT JOIN
   UNNEST(research_orgs) AS research_orgs_grids
LEFT JOIN
   `bigquery-public-data.dimensions_ai_covid19.grid` grid
ON
   grid.id=research_orgs_grids
WHERE
   EXTRACT(YEAR FROM date_inserted) >= 2021
   AND
   grid.address.city = 'Qianjiang'"""

# bq398's CTE is declared `russia_Data` and read as `russia_data` (BigQuery names are
# case-insensitive); a recursive CTE reads itself (shortened from local066).
CTE_CASE = """WITH russia_Data AS (SELECT id.value FROM `p.debt.international_debt` id)
SELECT value FROM russia_data LIMIT 3"""
RECURSIVE = """WITH RECURSIVE split(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM split
WHERE n < 3) SELECT * FROM split JOIN pizza_toppings t ON t.topping_id = split.n"""


def test_snowflake_db_schema_table_without_ctes_or_aliases() -> None:
    assert sql_table_names(SF_BQ377, "snowflake") == [
        ("GITHUB_REPOS", "GITHUB_REPOS", "SAMPLE_CONTENTS")
    ]
    tables = [f"GITHUB_REPOS.GITHUB_REPOS.SAMPLE_{t}" for t in ("COMMITS", "CONTENTS")]
    assert gold_tables(SF_BQ377, "snowflake", tables).tables == (1,)


def test_bigquery_aliases_and_project_dataset_table() -> None:
    assert sql_table_names(BQ413, "bigquery") == [
        ("bigquery-public-data", "dimensions_ai_covid19", "publications"),
        ("bigquery-public-data", "dimensions_ai_covid19", "grid"),
    ]
    tables = [
        "bigquery-public-data.dimensions_ai_covid19.grid",
        "bigquery-public-data.dimensions_ai_covid19.publications",
        "bigquery-public-data.dimensions_ai_covid19.clinical_trials",
    ]
    assert gold_tables(BQ413, "bigquery", tables).tables == (1, 0)


def test_wildcard_is_a_family_of_the_matching_tables() -> None:
    assert sql_table_names(BQ357, "bigquery") == [
        ("bigquery-public-data", "noaa_icoads", "icoads_core_*")
    ]
    tables = [
        "bigquery-public-data.noaa_icoads.icoads_core_2005",
        "bigquery-public-data.noaa_icoads.other",
        "bigquery-public-data.noaa_icoads.icoads_core_2006",
        "bigquery-public-data.noaa_other.icoads_core_2007",  # another dataset
    ]
    gold = gold_tables(BQ357, "bigquery", tables)
    assert (gold.tables, gold.families, gold.problem) == ((0,), ((0, 2),), "")


def test_sqlite_ctes_and_aliases() -> None:
    tables = ["olist_orders", "olist_customers", "olist_order_payments", "olist_products"]
    assert gold_tables(LOCAL029, "sqlite", tables).tables == (1, 0, 2)


def test_cte_names_in_another_case_and_recursive_ctes_are_not_tables() -> None:
    assert sql_table_names(CTE_CASE, "bigquery") == [("p", "debt", "international_debt")]
    assert sql_table_names(RECURSIVE, "sqlite") == [("pizza_toppings",)]


def test_names_match_case_blanks_and_another_databases_copy() -> None:
    # the schema file has "…nhtsa_traffic_fatalities. accident_2016" (a blank after the dot)
    sql = "SELECT * FROM `bigquery-public-data.nhtsa_traffic_fatalities.accident_2016`"
    tables = ["bigquery-public-data.nhtsa_traffic_fatalities. accident_2016"]
    assert gold_tables(sql, "bigquery", tables).tables == (0,)
    # sf_bq233 reads GITHUB_REPOS_DATE's copy of the schema its database also has
    sql = "SELECT * FROM GITHUB_REPOS_DATE.GITHUB_REPOS.SAMPLE_FILES"
    assert gold_tables(sql, "snowflake", ["GITHUB_REPOS.GITHUB_REPOS.SAMPLE_FILES"]).tables == (0,)


def test_unresolvable_unparsable_and_tableless_sql_have_no_gold() -> None:
    sql = "SELECT * FROM `bigquery-public-data.san_francisco.bikeshare_stations`"
    missing = gold_tables(sql, "bigquery", ["bigquery-public-data.sf_plus.sfpd_incidents"])
    assert missing.tables == ()
    assert missing.problem == (
        "no table in its database named bigquery-public-data.san_francisco.bikeshare_stations"
    )
    assert gold_tables("SELECT (", "sqlite", ["t"]).problem.startswith("parse failure")
    assert gold_tables("SELECT 1", "sqlite", ["t"]).problem == "no table in the SQL"
    ambiguous = gold_tables("SELECT * FROM t", "snowflake", ["A.S.T", "B.S.T"])
    assert ambiguous.problem == "ambiguous table t"


@pytest.fixture(scope="module")
def bench(data_dir: Path) -> Benchmark:
    return spider2_lite(data_dir)


def test_spider2_lite_counts(bench: Benchmark) -> None:
    assert len(bench.questions) == 248
    assert bench.catalog.num_databases == 162
    assert bench.catalog.num_tables == 8255
    assert sum(1 for q in bench.questions if q.families) == 32
    assert "248 of 547 questions have gold tables" in bench.source
    assert "297 no public gold SQL" in bench.source
    assert ": sf_bq295" in bench.source
    assert ": bq376" in bench.source
    by_id = {q.id: q for q in bench.questions}
    cat = bench.catalog
    # bq010 reads ga_sessions_201707*: the 31 July 2017 shards
    assert [len(f) for f in by_id["bq010"].families] == [31]
    assert by_id["bq010"].gold_tables == (by_id["bq010"].families[0][0],)
    # question db ids differ from schema keys (Db-IMDB is DB_IMDB) and in case (AUSTIN/austin)
    for q in bench.questions:
        assert all(cat.database(cat.table(t).database).name == q.db for t in q.gold_tables)
    names = [cat.qualified_name(t) for t in by_id["sf_bq377"].gold_tables]
    assert names == ["GITHUB_REPOS.GITHUB_REPOS.GITHUB_REPOS.SAMPLE_CONTENTS"]
    # column descriptions come from each table's description list, aligned by position
    described = sum(1 for c in range(cat.num_columns) if cat.column(c).description)
    assert 380_000 < described < cat.num_columns  # 386,773 of 532,388
    first = cat.find_table("CPTAC_PDC", "isb-cgc-bq.CPTAC.RNAseq_hg38_gdc_current")
    assert first is not None
    site = cat.find_column(first, "primary_site")
    assert site is not None
    assert cat.column(site).description == (
        "Anatomical site of the cancer under investigation or review"
    )


def test_questions_carry_the_external_knowledge_document_they_name(
    bench: Benchmark, data_dir: Path
) -> None:
    documents = json.loads(
        (data_dir / "spider2-lite/external_knowledge_documents.json").read_text(encoding="utf-8")
    )
    by_id = {q.id: q for q in bench.questions}
    # bq011 names ga4_obfuscated_sample_ecommerce.events.md (spider2-lite.jsonl)
    assert (
        by_id["bq011"].knowledge == documents["ga4_obfuscated_sample_ecommerce.events.md"].strip()
    )
    assert sum(1 for q in bench.questions if q.knowledge) == 48
    plus = with_knowledge(bench)
    assert plus.name == "spider2-lite+knowledge"
    assert "48 of 248 questions have some" in plus.source
    for before, after in zip(bench.questions, plus.questions, strict=True):
        expected = f"{before.question}\n{before.knowledge}" if before.knowledge else before.question
        assert after.question == expected
        assert after.gold_tables == before.gold_tables


def test_documents_ship_with_the_databases_whose_questions_name_them(bench: Benchmark) -> None:
    # 63 documents named by questions; a document several databases' questions name ships
    # with each of them
    assert len(bench.documents) == 54
    assert sum(len(texts) for texts in bench.documents.values()) == 70
    plus = with_documents(bench)
    assert plus.name == "spider2-lite+documents"
    assert "70 documents of 54 databases attached: 511 tables gained" in plus.source
    events = plus.catalog.find_table(
        "ga4", "bigquery-public-data.ga4_obfuscated_sample_ecommerce.events_20201101"
    )
    assert events is not None
    assert bench.catalog.table(events).description == ""
    assert "`events_YYYYMMDD` is complete" in plus.catalog.table(events).description


def test_an_unknown_knowledge_document_is_named() -> None:
    line = {"instance_id": "x1", "external_knowledge": "missing.md"}
    with pytest.raises(
        SchemaError, match=r"q.jsonl: x1: unknown external knowledge document 'missing.md'"
    ):
        question_knowledge(line, {"other.md": "text"}, Path("q.jsonl"))
    assert (
        question_knowledge({"instance_id": "x2", "external_knowledge": None}, {}, Path("q")) == ""
    )


@pytest.mark.parametrize(
    ("content", "error", "message"),
    [
        (b'{"a.md": "text",\n  oops}', ParseError, r"external_knowledge_documents.json:2: invalid"),
        (b'{"a.md":\n "\xff"}', ParseError, r"documents.json:2: not valid UTF-8: byte 0xFF"),
        (b'{"a.md": 3}', SchemaError, r"external_knowledge_documents.json: expected an object"),
        (None, FileError, r"external_knowledge_documents.json: no such file"),
    ],
)
def test_a_bad_knowledge_document_file_is_named(
    tmp_path: Path, content: bytes | None, error: type[Exception], message: str
) -> None:
    path = tmp_path / "spider2-lite/external_knowledge_documents.json"
    path.parent.mkdir()
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(error, match=message) as info:
        knowledge_documents(tmp_path)
    if isinstance(info.value, ParseError):
        assert (info.value.source, info.value.line) == (str(path), 2)


def test_a_truncated_gzip_schema_is_a_file_error(tmp_path: Path) -> None:
    from tabret.spider2 import read_schema

    path = tmp_path / "spider2-lite/spider2_lite_schema.json.gz"
    path.parent.mkdir()
    path.write_bytes(gzip.compress(b'{"db": []}')[:-6])
    with pytest.raises(FileError, match=r"spider2_lite_schema.json.gz: cannot read"):
        read_schema(tmp_path)
    path.write_bytes(gzip.compress(b'{"db": [}'))
    with pytest.raises(ParseError, match=r"spider2_lite_schema.json.gz:1: invalid JSON"):
        read_schema(tmp_path)


def test_column_descriptions_align_or_are_left_out() -> None:
    from tabret.spider2 import column_descriptions

    table = {"description": repr(["a", None, "  two\n words "])}
    assert column_descriptions(table, ["x", "y", "z"]) == ["a", "", "two words"]
    assert column_descriptions(table, ["x", "y"]) == ["", ""]  # cannot be aligned
    assert column_descriptions({}, ["x", "y"]) == ["", ""]
    nested = {
        "description": ["top", "inner", "other"],
        "extra": repr({"nested_column_names": ["rec", "rec.inner", "flat"]}),
    }
    assert column_descriptions(nested, ["rec", "flat"]) == ["top", "other"]


def _ranking(tables: list[int]) -> Retrieval:
    return Retrieval("q", [ScoredTable(t, "", 1.0) for t in tables], [])


def test_any_family_member_satisfies_the_gold_item() -> None:
    q = BenchmarkQuestion("1", "db", "q", (0, 5), families=((0, 1, 2),))
    bench = Benchmark("b", demo_catalog(), [q], "")
    res = evaluate(lambda qs, k: [_ranking([2, 9, 5][:k])], bench, (1, 3), progress=False)
    assert res.recall == {1: 50.0, 3: 100.0}
    assert res.complete_recall == {1: 0.0, 3: 100.0}
    assert res.per_question[0]["ranked"] == [2, 9, 5]  # the ranking as retrieved


def test_per_database_parts_rank_their_own_tables_only() -> None:
    union = demo()
    per_db = replace(union, per_database=True)
    with pytest.raises(ValueError, match="database_benchmarks"):
        evaluate(lambda qs, k: [], per_db, progress=False)
    parts = database_benchmarks(per_db)
    assert sum(len(p.questions) for p in parts) == len(union.questions)
    index = TableIndex.build(union.catalog, HashingEmbedder(), progress=False)
    ks = (1, 3, 5)
    results = []
    for part in parts:
        assert part.catalog.num_databases == 1
        assert not part.per_database
        sub = TableIndex.build(part.catalog, HashingEmbedder(), progress=False)
        res = evaluate(DenseRetriever(sub).retrieve, part, ks, progress=False)
        results.append(res)
        # dense scores do not depend on the other databases: the part's ranking is the
        # union's ranking restricted to the database
        db = union.catalog.find_database(part.questions[0].db)
        full = DenseRetriever(index).retrieve([q.question for q in part.questions], 69)
        for row, ranking in zip(res.per_question, full, strict=True):
            tables = [union.catalog.table(t.id) for t in ranking.tables]
            own = [t.name for t in tables if t.database == db]
            assert [part.catalog.table(t).name for t in row["ranked"]] == own[:5]
    merged = merge_results(results, union)
    assert merged.questions == len(union.questions)
    n = merged.questions
    for k in ks:
        want = sum(r.recall[k] * r.questions for r in results) / n
        assert merged.recall[k] == pytest.approx(want)


def test_a_database_part_keeps_the_column_constraints() -> None:
    cat = Catalog()
    db = cat.add_database("shop")
    t = cat.add_table(db, "orders")
    cat.add_column(t, "id", "int")
    cat.set_constraints(cat.add_column(t, "total", "real"), not_null=True, default="0")
    q = BenchmarkQuestion("1", "shop", "orders?", (t,))
    (part,) = database_benchmarks(Benchmark("b", cat, [q], "", per_database=True))
    total_id = part.catalog.find_column(0, "total")
    assert total_id is not None
    total = part.catalog.column(total_id)
    assert (total.not_null, total.unique, total.default) == (True, False, "0")


def _questions_file(tmp_path: Path, lines: list[str]) -> Path:
    path = tmp_path / "mine.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _catalog_file(tmp_path: Path) -> Path:
    path = tmp_path / "catalog.json"
    demo_catalog().save_json(path)
    return path


def _good_lines() -> list[str]:
    return [
        json.dumps({"question": "Which wards have most beds?", "gold_tables": ["hospital.ward"]}),
        "",
        json.dumps(
            {
                "id": "two",
                "question": "Patients admitted to cardiology",
                "gold_tables": ["HOSPITAL.patient", "hospital.pt_admission", "hospital.ward"],
                "knowledge": "cardiology is ward type C",
            }
        ),
    ]


def test_questions_benchmark_reads_json_lines(tmp_path: Path) -> None:
    bench = questions_benchmark(_questions_file(tmp_path, _good_lines()), demo_catalog())
    assert [q.id for q in bench.questions] == ["1", "two"]
    assert [q.db for q in bench.questions] == ["hospital", "hospital"]
    assert [len(q.gold_tables) for q in bench.questions] == [1, 3]
    assert [q.knowledge for q in bench.questions] == ["", "cardiology is ward type C"]


@pytest.mark.parametrize(
    ("line", "error", "message"),
    [
        ("{not json", ParseError, "mine.jsonl:2: invalid JSON"),
        ("[1, 2]", SchemaError, "mine.jsonl:2: expected a JSON object"),
        (
            '{"question": "q", "gold_tables": ["hospital.ward"], "knowledge": 3}',
            SchemaError,
            "mine.jsonl:2: 'knowledge' must be a string",
        ),
        ('{"gold_tables": ["hospital.ward"]}', SchemaError, "mine.jsonl:2: 'question'"),
        ('{"question": "q", "gold_tables": []}', SchemaError, "mine.jsonl:2: 'gold_tables'"),
        (
            '{"question": "q", "gold_tables": ["hospital.nowhere"]}',
            SchemaError,
            "mine.jsonl:2: unknown table 'hospital.nowhere'",
        ),
        (
            '{"question": "q", "db": "nodb", "gold_tables": ["hospital.ward"]}',
            SchemaError,
            "mine.jsonl:2: unknown database 'nodb'",
        ),
    ],
)
def test_questions_benchmark_errors_name_file_and_line(
    tmp_path: Path, line: str, error: type[Exception], message: str
) -> None:
    path = _questions_file(tmp_path, [_good_lines()[0], line])
    with pytest.raises(error, match=message) as info:
        questions_benchmark(path, demo_catalog())
    if isinstance(info.value, ParseError):
        assert (info.value.source, info.value.line) == (str(path), 2)


def test_cli_eval_own_questions(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _questions_file(tmp_path, _good_lines())
    argv = ["eval", "--questions", str(path), "--catalog", str(_catalog_file(tmp_path))]
    argv += ["--embedder", "hashing", "--quiet", "--k", "5", "10", "--method", "single-hop", "bm25"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "| mine | hashing(" in out
    assert "| bm25 |" in out
    assert "2 questions" in out


def test_cli_eval_knowledge(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _questions_file(tmp_path, _good_lines())
    argv = ["eval", "--questions", str(path), "--catalog", str(_catalog_file(tmp_path))]
    argv += ["--embedder", "hashing", "--quiet", "--k", "5", "--knowledge"]
    assert main([*argv, "--method", "single-hop"]) == 0
    out = capsys.readouterr().out
    assert "| mine+knowledge | hashing(" in out
    assert "(1 of 2 questions have some)" in out
    # recorded LLM answers are keyed by the plain question: refused, not silently missed
    assert main([*argv, "--method", "crush", "greedy-join"]) == 1
    err = capsys.readouterr().err
    assert "--knowledge changes the question text" in err
    assert "crush, greedy-join" in err
    assert main([*argv, "--method", "crush", "--llm", "offline"]) == 0


def test_cli_eval_own_questions_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = _questions_file(tmp_path, ['{"question": "q", "gold_tables": ["hospital.x"]}'])
    catalog = str(_catalog_file(tmp_path))
    base = ["eval", "--embedder", "hashing", "--quiet"]
    assert main([*base, "--questions", str(bad), "--catalog", catalog]) == 1
    assert "mine.jsonl:1: unknown table 'hospital.x'" in capsys.readouterr().err
    assert main([*base, "--questions", str(bad)]) == 1
    assert "--questions needs --catalog" in capsys.readouterr().err
    missing = str(tmp_path / "none.jsonl")
    assert main([*base, "--questions", missing, "--catalog", catalog]) == 1
    assert "none.jsonl: no such file" in capsys.readouterr().err
    assert main([*base, "--benchmark", "demo", "--catalog", catalog]) == 1
    assert "--catalog goes with --questions" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main([*base, "--questions", str(bad), "--benchmark", "demo"])
    capsys.readouterr()
