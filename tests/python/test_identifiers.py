"""Identifier segmentation: wordninja's word list through the C++ segmenter, catalogs renamed,
and `tabret eval --identifiers split` on a catalog of concatenated identifiers."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest

from tabret import Catalog, SchemaError
from tabret.cli import main
from tabret.identifiers import (
    WordSegmenter,
    default_abbreviations,
    default_segmenter,
    expand_abbreviations,
    learned_abbreviations,
    segment_names,
    split,
    word_list,
)

if TYPE_CHECKING:
    from pathlib import Path

pytest.importorskip("wordninja")


def test_word_list_is_wordninjas_most_frequent_first() -> None:
    words = word_list()
    assert len(words) > 100_000
    assert words[:3] == ("the", "of", "in")


@pytest.mark.parametrize(
    ("identifier", "natural"),
    [
        ("ACCOUNTHOLDERNAME", "account holder name"),
        ("invoicelines", "invoice lines"),
        ("CurrencyRateID", "currency rate id"),
        ("raceimputationflag", "race imputation flag"),
        ("subsector_code", "sub sector code"),
        # Kept whole: words, inflections, no confident split.
        ("quartile", "quartile"),
        ("versioned", "versioned"),
        ("unsellable", "unsellable"),
        ("cpsaat18", "cpsaat18"),
        ("ga_sessions_20170801", "ga sessions 20170801"),
    ],
)
def test_natural_names_of_identifiers(identifier: str, natural: str) -> None:
    assert default_segmenter().natural_name(identifier) == natural


def test_own_word_list_and_options() -> None:
    words = ["in", "voice", "lines", "invoice"]
    assert split("invoicelines", words) == ["invoice", "lines"]
    assert WordSegmenter(words, word_penalty=0.0).split("invoicelines") == ["in", "voice", "lines"]
    assert WordSegmenter(words, min_length=20).split("invoicelines") == ["invoicelines"]
    with pytest.raises(Exception, match="empty word list"):
        WordSegmenter([])


def _catalog() -> Catalog:
    cat = Catalog()
    db = cat.add_database("BANK")
    t = cat.add_table(db, "ACCOUNTHOLDER", "", "people with accounts")
    key = cat.add_column(t, "ACCOUNTHOLDERID", "int")
    cat.add_column(t, "CTRY", "text", "country of residence")
    cat.set_primary_key(t, [key])
    u = cat.add_table(db, "INVOICELINES")
    cat.add_foreign_key(cat.add_column(u, "ACCOUNTHOLDERID", "int"), key)
    cat.set_constraints(cat.add_column(u, "UNITPRICE", "real"), not_null=True, default="0")
    return cat


def test_segment_names_keeps_ids_keys_and_given_names() -> None:
    cat = _catalog()
    out = segment_names(cat)
    assert isinstance(out, Catalog)
    assert [t.nl_name for t in out.tables] == ["account holder", "invoice lines"]
    assert [c.nl_name for c in out.columns] == [
        "account holder id",
        "country of residence",
        "account holder id",
        "unit price",
    ]
    assert out.table(0).description == "people with accounts"
    assert [t.primary_key for t in out.tables] == [t.primary_key for t in cat.tables]
    assert out.foreign_keys == cat.foreign_keys
    assert [c.name for c in out.columns] == [c.name for c in cat.columns]
    assert (out.column(3).not_null, out.column(3).default) == (True, "0")  # constraints kept
    # The input is unchanged, and a second pass changes nothing.
    assert cat.table(0).nl_name == "accountholder"
    assert segment_names(out) == out
    with pytest.raises(SchemaError):
        cat.add_table(0, "ACCOUNTHOLDER")


def test_cli_eval_identifiers_split(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """BM25 matches question words only against split identifiers."""
    catalog = tmp_path / "bank.json"
    _catalog().save_json(catalog)
    questions = tmp_path / "q.jsonl"
    line = {"question": "unit price of invoice lines", "gold_tables": ["BANK.INVOICELINES"]}
    questions.write_text(json.dumps(line) + "\n", encoding="utf-8")
    base = ["eval", "--questions", str(questions), "--catalog", str(catalog), "--quiet"]
    base += ["--embedder", "hashing", "--method", "bm25", "--k", "1", "--json"]
    complete = {}
    for mode in ["declared", "split"]:
        assert main([*base, "--identifiers", mode]) == 0
        complete[mode] = json.loads(capsys.readouterr().out)[0]["complete_recall"]["1"]
    assert complete == {"declared": 0.0, "split": 100.0}


def _shop() -> Catalog:
    cat = Catalog()
    db = cat.add_database("shop")
    t = cat.add_table(db, "CUST_ACCT")
    key = cat.add_column(t, "cust_acct_id", "int")
    cat.set_primary_key(t, [key])
    cat.add_column(t, "mgr_nm", "text", "name of the mgr")  # given: kept
    u = cat.add_table(db, "order_lines")
    cat.add_foreign_key(cat.add_column(u, "cust_acct_id", "int"), key)
    cat.set_constraints(cat.add_column(u, "OrderQty", "int"), not_null=True, default="1")
    cat.add_column(u, "plyr_ref")
    cat.add_column(u, "player_name")
    cat.add_column(u, "ord_total")
    return cat


def test_default_abbreviations() -> None:
    d = default_abbreviations()
    assert d["qty"] == "quantity"
    assert d["dob"] == "date of birth"
    assert not {"id", "no", "inv", "temp", "stat", "cur", "max", "min", "std"} & d.keys()
    d["qty"] = "x"  # a copy
    assert default_abbreviations()["qty"] == "quantity"


def test_expand_abbreviations_dictionary_and_learned() -> None:
    cat = segment_names(_shop())
    out = expand_abbreviations(cat)
    assert isinstance(out, Catalog)
    assert [t.nl_name for t in out.tables] == ["customer account", "order lines"]
    assert [c.nl_name for c in out.columns] == [
        "customer account id",
        "name of the mgr",
        "customer account id",
        "order quantity",
        "player ref",  # learned: plyr beside player
        "player name",
        "order total",  # learned: `ord` is rare, and a prefix of order
    ]
    assert learned_abbreviations(cat, 0) == {"ord": "order", "plyr": "player"}
    # Ids, keys, types, descriptions and constraints are kept; a second pass changes nothing.
    assert [c.name for c in out.columns] == [c.name for c in cat.columns]
    assert [c.type for c in out.columns] == [c.type for c in cat.columns]
    assert out.foreign_keys == cat.foreign_keys
    assert [t.primary_key for t in out.tables] == [t.primary_key for t in cat.tables]
    assert (out.column(3).not_null, out.column(3).default) == (True, "1")
    assert expand_abbreviations(out) == out


def test_expand_abbreviations_options() -> None:
    cat = _shop()
    out = expand_abbreviations(cat, learn=False)
    assert out.table(0).nl_name == "customer account"
    assert out.column(4).nl_name == "plyr ref"  # nothing learned
    # A dictionary of one's own replaces the default one.
    mine = expand_abbreviations(cat, {"QTY": "Amount"}, learn=False)
    assert mine.column(3).nl_name == "order amount"
    assert mine.column(0).nl_name == "cust acct id"
    # A word list of one's own: `ord` is a common word there, `plyr` is not in it.
    words = ["ord", "the", "of", "player", "order"]
    out = expand_abbreviations(cat, words=words)
    assert (out.column(4).nl_name, out.column(6).nl_name) == ("player ref", "ord total")
    assert learned_abbreviations(cat, 0, words=WordSegmenter(words)) == {"plyr": "player"}


def test_cli_identifiers_expand_splits_then_expands() -> None:
    from tabret.cli._common import understood

    out = understood(_shop(), "expand", "declared")
    assert out.table(0).nl_name == "customer account"
    assert out.column(3).nl_name == "order quantity"
    assert understood(_shop(), "split", "declared").column(3).nl_name == "order qty"


PHONE = "CREATE TABLE phone (id INT, ext_no TEXT, except_reason TEXT, cust_name TEXT);"


def test_learned_abbreviations_are_shown_and_overridden(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`ext` -> except is learned from `except_reason`: `tabret catalog --show-abbreviations`
    lists it, `tabret index --identifiers expand` says so, and --abbreviations overrides it."""
    from tabret.index import TableIndex

    ddl = tmp_path / "crm.sql"
    ddl.write_text(PHONE, encoding="utf-8")
    assert main(["catalog", "ddl", str(ddl), "--show-abbreviations"]) == 0
    assert "  crm: ext -> except" in capsys.readouterr().out
    mine = tmp_path / "mine.json"
    mine.write_text(json.dumps({"EXT": "extension"}), encoding="utf-8")
    argv = ["catalog", "ddl", str(ddl), "--show-abbreviations", "--abbreviations", str(mine)]
    assert main([*argv, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["abbreviations"] == {}  # nothing left to learn

    names = {}
    for extra in ([], ["--abbreviations", str(mine)]):
        out = tmp_path / f"crm{len(extra)}.idx"
        argv = ["index", "ddl", str(ddl), str(out), "--embedder", "hashing", "--quiet"]
        assert main([*argv, "--identifiers", "expand", *extra]) == 0
        cat = TableIndex.load(out).catalog
        names[len(extra)] = [cat.column(c).nl_name for c in cat.table(0).columns]
    err = capsys.readouterr().err
    assert "abbreviations learned from the names: 1 in 1 databases (ext -> except)" in err
    assert names[0][1] == "except no"  # what the database taught, wrong here
    assert names[2][1:4] == ["extension no", "except reason", "customer name"]


def test_abbreviation_files_are_checked(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tabret.identifiers import read_abbreviations

    bad = tmp_path / "bad.json"
    for text, message in [
        ('["ext"]', "one JSON object"),
        ('{"ext": 1}', "entry 'ext'"),
        ('{"ext": "ext",', "bad.json:1: not JSON"),
    ]:
        bad.write_text(text, encoding="utf-8")
        with pytest.raises(ValueError, match=message):
            read_abbreviations(bad)
    bad.write_text('\ufeff{"Ext": "Ext"}', encoding="utf-8")  # a BOM is skipped
    assert read_abbreviations(bad) == {"ext": "ext"}
    ddl = tmp_path / "crm.sql"
    ddl.write_text(PHONE, encoding="utf-8")
    argv = ["index", "ddl", str(ddl), str(tmp_path / "i"), "--embedder", "hashing"]
    assert main([*argv, "--abbreviations", str(bad)]) == 1
    assert "--abbreviations only feeds --identifiers expand" in capsys.readouterr().err
