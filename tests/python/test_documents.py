"""Documents attached to a database (tabret.documents, issue 22 item 2): the passages that name
a table join its description."""

from __future__ import annotations

from dataclasses import replace

import pytest

from tabret import Catalog, SchemaError
from tabret.benchmarks import demo, with_documents
from tabret.documents import attach_documents, passages

GUIDE = """# Events

The events table holds one row per hit; `event_name` says what happened.


## Sessions
A session groups the events of one visit.

Revenue is reported in micros: divide by 1,000,000.

The ad table is not this one.
"""


def _catalog() -> Catalog:
    cat = Catalog()
    ga = cat.add_database("ga4")
    for name in ("project.ga4.events_20210131", "project.ga4.events_20210201", "users", "ad"):
        t = cat.add_table(ga, name, description="own words" if name == "users" else "")
        cat.add_column(t, "id", "INT")
    other = cat.add_database("shop")
    cat.add_column(cat.add_table(other, "events"), "id", "INT")
    return cat


def test_passages_are_paragraphs_with_their_heading() -> None:
    assert passages(GUIDE) == [
        "# Events The events table holds one row per hit; `event_name` says what happened.",
        "## Sessions A session groups the events of one visit.",
        "Revenue is reported in micros: divide by 1,000,000.",
        "The ad table is not this one.",
    ]
    assert passages("\n\n  \n") == []
    assert passages("# Only a heading") == ["# Only a heading"]


def test_tables_gain_the_passages_that_name_them() -> None:
    cat = _catalog()
    attached = attach_documents(cat, {"GA4": [GUIDE]})
    events = attached.table(0)
    # a date-sharded table is named by its stem, as a whole word
    assert events.description == " ".join(passages(GUIDE)[:2])
    assert attached.table(1).description == events.description
    # a table no passage names keeps its own description; "ad" is too short to match
    assert attached.table(2).description == "own words"
    assert attached.table(3).description == ""
    # other databases and the original catalog are untouched
    assert attached.table(4).description == ""
    assert cat.table(0).description == ""
    assert attached.num_columns == cat.num_columns
    assert attached.table(0).name == cat.table(0).name


def test_what_a_table_gains_is_capped_in_whole_passages() -> None:
    first, second = passages(GUIDE)[:2]
    capped = attach_documents(_catalog(), {"ga4": [GUIDE]}, max_chars=len(first) + 1)
    assert capped.table(0).description == first
    # a passage that does not fit is skipped, a later one that fits is kept
    only_second = attach_documents(_catalog(), {"ga4": [GUIDE]}, max_chars=len(second))
    assert only_second.table(0).description == second
    with pytest.raises(ValueError, match="max_chars must be at least 1"):
        attach_documents(_catalog(), {"ga4": [GUIDE]}, max_chars=0)


def test_bad_documents_are_named() -> None:
    with pytest.raises(SchemaError, match="documents for database 'nowhere': not in the catalog"):
        attach_documents(_catalog(), {"nowhere": [GUIDE]})
    with pytest.raises(SchemaError, match="database 'ga4': expected a list of document texts"):
        attach_documents(_catalog(), {"ga4": GUIDE})
    with pytest.raises(SchemaError, match="database 'ga4': expected a list"):
        attach_documents(_catalog(), {"ga4": [GUIDE, 3]})  # type: ignore[list-item]


def test_with_documents_names_the_rows_and_says_what_it_attached() -> None:
    bench = demo()
    with pytest.raises(ValueError, match="benchmark 'demo' ships no documents"):
        with_documents(bench)
    shipped = replace(bench, documents={"hospital": ("# Wards\nThe ward table lists wards.",)})
    plus = with_documents(shipped)
    assert plus.name == "demo+documents"
    assert "1 documents of 1 databases attached: 1 tables gained" in plus.source
    ward = next(t for t in range(plus.catalog.num_tables) if plus.catalog.table(t).name == "ward")
    assert plus.catalog.table(ward).description.endswith("# Wards The ward table lists wards.")
    assert plus.questions == bench.questions


def test_cli_documents_needs_descriptions_embedded_and_documents(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from tabret.cli import main

    base = ["eval", "--benchmark", "demo", "--embedder", "hashing", "--quiet"]
    base += ["--method", "single-hop", "--documents"]
    assert main(base) == 1
    assert "--documents adds to table descriptions: add --format described" in (
        capsys.readouterr().err
    )
    assert main([*base, "--format", "described"]) == 1
    assert "benchmark 'demo' ships no documents" in capsys.readouterr().err
