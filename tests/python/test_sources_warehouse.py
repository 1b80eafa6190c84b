"""The catalog sources warehouses use (issue 51 item 4): a DuckDB file read natively, a dbt
``manifest.json`` (schema v7 and v12, with and without ``catalog.json``), and
``INFORMATION_SCHEMA`` exports as CSV and JSON; each made here, then loaded through the Python
API and ``tabret catalog`` / ``tabret index``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tabret import Catalog, FileError, ParseError, SchemaError
from tabret.cli import main

duckdb = pytest.importorskip("duckdb")


def _columns(cat: Catalog, db: str, table: str) -> list[tuple[str, str, str]]:
    t = cat.find_table(db, table)
    assert t is not None, f"no table {db}.{table}"
    return [
        (cat.column(c).name, cat.column(c).type, cat.column(c).description)
        for c in cat.table(t).columns
    ]


def _keys(cat: Catalog) -> set[tuple[str, str]]:
    return {(fk.from_name, fk.to_name) for fk in cat.foreign_keys}


def _primary_key(cat: Catalog, db: str, table: str) -> list[str]:
    t = cat.find_table(db, table)
    assert t is not None
    return [cat.column(c).name for c in cat.table(t).primary_key]


def _column(cat: Catalog, db: str, table: str, column: str) -> Any:
    t = cat.find_table(db, table)
    assert t is not None
    c = cat.find_column(t, column)
    assert c is not None
    return cat.column(c)


# --- DuckDB ---------------------------------------------------------------------------------


@pytest.fixture
def shop_duckdb(tmp_path: Path) -> Path:
    path = tmp_path / "shop.duckdb"
    conn = duckdb.connect(str(path))
    conn.execute("""
        CREATE TABLE customer (id INTEGER PRIMARY KEY, email VARCHAR NOT NULL UNIQUE,
                               status VARCHAR DEFAULT 'active');
        CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER REFERENCES customer(id),
                             total DECIMAL(10, 2));
        CREATE SCHEMA sales;
        CREATE TABLE sales.shipment (order_id INTEGER, line INTEGER, carrier VARCHAR,
                                     PRIMARY KEY (order_id, line));
        CREATE TABLE sales.tracking (order_id INTEGER, line INTEGER, event VARCHAR,
            FOREIGN KEY (order_id, line) REFERENCES sales.shipment (order_id, line));
        CREATE VIEW big_orders AS SELECT id, total FROM orders WHERE total > 100;
        COMMENT ON TABLE customer IS 'people who buy';
        COMMENT ON COLUMN customer.email IS 'login address';
        COMMENT ON VIEW big_orders IS 'orders over 100';
    """)
    conn.close()
    return path


def test_duckdb_tables_columns_keys_and_comments(shop_duckdb: Path) -> None:
    before = shop_duckdb.read_bytes()
    cat = Catalog.from_duckdb(shop_duckdb)
    assert [d.name for d in cat.databases] == ["shop"]
    # The default schema's tables by name alone, the others qualified; views are tables.
    assert [t.name for t in cat.tables] == [
        "big_orders",
        "customer",
        "orders",
        "sales.shipment",
        "sales.tracking",
    ]
    assert _columns(cat, "shop", "customer") == [
        ("id", "integer", ""),
        ("email", "varchar", "login address"),
        ("status", "varchar", ""),
    ]
    table = cat.find_table("shop", "customer")
    assert table is not None
    assert cat.table(table).description == "people who buy"
    big = cat.find_table("shop", "big_orders")
    assert big is not None
    assert cat.table(big).description == "orders over 100"
    email = _column(cat, "shop", "customer", "email")
    assert (email.not_null, email.unique) == (True, True)
    assert _column(cat, "shop", "customer", "status").default == "'active'"
    assert _column(cat, "shop", "orders", "total").type == "decimal(10,2)"
    assert _primary_key(cat, "shop", "sales.shipment") == ["order_id", "line"]
    assert _keys(cat) == {
        ("shop.orders.customer_id", "shop.customer.id"),
        ("shop.sales.tracking.order_id", "shop.sales.shipment.order_id"),
        ("shop.sales.tracking.line", "shop.sales.shipment.line"),
    }
    assert shop_duckdb.read_bytes() == before  # opened read-only
    assert not shop_duckdb.with_suffix(".duckdb.wal").exists()


def test_duckdb_name_and_all_or_nothing(shop_duckdb: Path) -> None:
    cat = Catalog.from_duckdb(shop_duckdb, "warehouse")
    assert cat.find_database("warehouse") is not None
    copy = Catalog(cat)
    with pytest.raises(SchemaError, match=r"shop\.duckdb: duplicate database 'warehouse'"):
        cat.add_duckdb(shop_duckdb, "warehouse")
    assert cat == copy


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"SQLite format 3\x00" + bytes(100), "is a SQLite database, not a DuckDB one"),
        (b"CREATE TABLE t (x INT);\n" * 4, "not a DuckDB database"),
    ],
)
def test_duckdb_refuses_other_files_by_name(tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "other.db"
    path.write_bytes(content)
    with pytest.raises(FileError, match=rf"other\.db: {message}"):
        Catalog.from_duckdb(path)
    with pytest.raises(FileError, match=r"missing\.duckdb: no such file"):
        Catalog.from_duckdb(tmp_path / "missing.duckdb")
    with pytest.raises(FileError, match="not a regular file"):
        Catalog.from_duckdb(tmp_path)


# --- dbt ------------------------------------------------------------------------------------

PROJECT = "jaffle_shop"


def _model(name: str, schema: str, description: str, columns: dict[str, Any], **extra: Any) -> Any:
    return {
        "resource_type": "model",
        "package_name": PROJECT,
        "name": name,
        "alias": name,
        "database": "analytics",
        "schema": schema,
        "description": description,
        "columns": columns,
        "config": {"materialized": "table"},
        **extra,
    }


def _col(name: str, description: str = "", data_type: str | None = None, **extra: Any) -> Any:
    return {"name": name, "description": description, "data_type": data_type, **extra}


def _source(name: str, identifier: str, database: str, columns: dict[str, Any]) -> Any:
    return {
        "resource_type": "source",
        "package_name": PROJECT,
        "source_name": "jaffle_shop",
        "source_description": "The shop's application database",
        "name": name,
        "identifier": identifier,
        "database": database,
        "schema": "jaffle_shop",
        "description": f"One row per {name[:-1]}, as the app writes it",
        "columns": columns,
    }


def _test(
    version: int,
    kind: str,
    attached: str,
    column: str,
    depends: list[str],
    **kwargs: Any,
) -> Any:
    """A generic test node as dbt writes it: v10 and later name the tested node in
    ``attached_node``; before, only ``kwargs.model`` and ``depends_on`` say it."""
    call = attached.split(".")
    model = f"ref('{call[-1]}')" if call[0] == "model" else f"source('{call[2]}', '{call[3]}')"
    node: dict[str, Any] = {
        "resource_type": "test",
        "package_name": PROJECT,
        "name": f"{kind}_{call[-1]}_{column}",
        "column_name": column,
        "test_metadata": {
            "name": kind,
            "namespace": None,
            "kwargs": {
                "column_name": column,
                "model": f"{{{{ get_where_subquery({model}) }}}}",
                **kwargs,
            },
        },
        "depends_on": {"macros": [f"macro.dbt.test_{kind}"], "nodes": depends},
        "config": {"severity": "ERROR"},
    }
    if version >= 10:
        node["attached_node"] = attached
    return node


def _manifest(version: int, raw_database: str) -> dict[str, Any]:
    src_orders, src_customers = (
        f"source.{PROJECT}.jaffle_shop.{t}" for t in ("orders", "customers")
    )
    stg_orders, customers, orders = (
        f"model.{PROJECT}.{m}" for m in ("stg_orders", "customers", "orders")
    )
    typed = version >= 12  # declared data types and contracts
    nodes: dict[str, Any] = {
        stg_orders: _model(
            "stg_orders",
            "staging",
            "Orders, renamed and cast",
            {"order_id": _col("order_id", "Primary key"), "customer_id": _col("customer_id")},
        ),
        customers: _model(
            "customers",
            "marts",
            "One row per customer with their lifetime value",
            {
                "customer_id": _col(
                    "customer_id",
                    "The customer's id",
                    "integer" if typed else None,
                    constraints=[{"type": "primary_key"}] if typed else [],
                ),
                "lifetime_value": _col("lifetime_value", "Sum of paid orders", "numeric"),
            },
        ),
        orders: _model(
            "orders",
            "marts",
            "One row per order",
            {
                "order_id": _col("order_id", "", "integer" if typed else None),
                "customer_id": _col("customer_id", "Who ordered"),
                "amount": _col("amount", "Order total in dollars", "numeric"),
            },
            **(
                {"constraints": [{"type": "primary_key", "columns": ["order_id"]}]} if typed else {}
            ),
        ),
        f"model.{PROJECT}.int_payments": _model(
            "int_payments", "staging", "", {}, config={"materialized": "ephemeral"}
        ),
        f"seed.{PROJECT}.country_codes": {
            **_model("country_codes", "seeds", "ISO country codes", {"code": _col("code")}),
            "resource_type": "seed",
            "alias": "countries",  # the relation's name is the alias, not the node's
        },
        # what no table is: a singular test, an analysis
        f"test.{PROJECT}.assert_positive": {"resource_type": "test", "name": "assert_positive"},
        f"analysis.{PROJECT}.report": {"resource_type": "analysis", "name": "report"},
        f"test.{PROJECT}.rel_orders": _test(
            version,
            "relationships",
            orders,
            "customer_id",
            [customers, orders],
            to="ref('customers')",
            field="customer_id",
        ),
        f"test.{PROJECT}.rel_stg": _test(
            version,
            "relationships",
            stg_orders,
            "customer_id",
            [src_customers, stg_orders],
            to="source('jaffle_shop', 'customers')",
            field="id",  # not among the source's documented columns: the test says it exists
        ),
        f"test.{PROJECT}.rel_src": _test(
            version,
            "relationships",
            src_orders,
            "user_id",
            [src_customers, src_orders],
            to="source('jaffle_shop', 'customers')",
            field="id",
        ),
        f"test.{PROJECT}.rel_ephemeral": _test(
            version,
            "relationships",
            orders,
            "order_id",
            [f"model.{PROJECT}.int_payments", orders],
            to="ref('int_payments')",
            field="order_id",
        ),
        f"test.{PROJECT}.nn": _test(version, "not_null", orders, "amount", [orders]),
        f"test.{PROJECT}.uq": _test(version, "unique", stg_orders, "order_id", [stg_orders]),
    }
    sources = {
        src_orders: _source(
            "orders",
            "raw_orders",
            raw_database,
            {"id": _col("id"), "user_id": _col("user_id", "The customer")},
        ),
        src_customers: _source("customers", "raw_customers", raw_database, {}),
    }
    metadata: dict[str, Any] = {
        "dbt_schema_version": f"https://schemas.getdbt.com/dbt/manifest/v{version}.json",
        "dbt_version": {7: "1.3.4", 12: "1.9.1"}.get(version, "1.5.0"),
        "generated_at": "2025-01-01T00:00:00Z",
        "adapter_type": "snowflake",
    }
    if version >= 10:
        metadata["project_name"] = PROJECT
    return {
        "metadata": metadata,
        "nodes": nodes,
        "sources": sources,
        "macros": {},
        "exposures": {},
        "metrics": {},
        "parent_map": {},
        "child_map": {},
    }


def _write(path: Path, data: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2))
    return path


def test_dbt_manifest_v7_one_database(tmp_path: Path) -> None:
    """v7 (dbt 1.3): no attached_node, no project name, no types; every relation in one
    warehouse database, so tables are named schema.name."""
    path = _write(tmp_path / "target" / "manifest.json", _manifest(7, "analytics"))
    cat = Catalog.from_dbt(path)
    assert [d.name for d in cat.databases] == [PROJECT]  # the models' package
    assert sorted(t.name for t in cat.tables) == [
        "jaffle_shop.raw_customers",
        "jaffle_shop.raw_orders",
        "marts.customers",
        "marts.orders",
        "seeds.countries",
        "staging.stg_orders",
    ]
    db = PROJECT
    orders = cat.find_table(db, "marts.orders")
    assert orders is not None
    assert cat.table(orders).description == "One row per order"
    assert _columns(cat, db, "marts.orders") == [
        ("order_id", "", ""),
        ("customer_id", "", "Who ordered"),
        ("amount", "numeric", "Order total in dollars"),
    ]
    # The source table's description; the column a relationships test names is added.
    assert _columns(cat, db, "jaffle_shop.raw_customers") == [("id", "", "")]
    assert _keys(cat) == {
        (f"{db}.marts.orders.customer_id", f"{db}.marts.customers.customer_id"),
        (f"{db}.staging.stg_orders.customer_id", f"{db}.jaffle_shop.raw_customers.id"),
        (f"{db}.jaffle_shop.raw_orders.user_id", f"{db}.jaffle_shop.raw_customers.id"),
    }
    assert _column(cat, db, "marts.orders", "amount").not_null
    assert _column(cat, db, "staging.stg_orders", "order_id").unique
    assert _primary_key(cat, db, "marts.orders") == []  # v7 has no contracts


def test_dbt_manifest_v12_with_catalog_json(tmp_path: Path) -> None:
    """v12: attached_node, declared types, primary key constraints, the project's name;
    sources in another database, so names carry the database; catalog.json beside it adds
    the warehouse's undocumented columns and types."""
    target = tmp_path / "target"
    _write(target / "manifest.json", _manifest(12, "raw"))
    _write(
        target / "catalog.json",
        {
            "metadata": {"dbt_schema_version": "https://schemas.getdbt.com/dbt/catalog/v1.json"},
            "nodes": {
                f"model.{PROJECT}.orders": {
                    "metadata": {"type": "BASE TABLE", "comment": None},
                    "columns": {
                        "ORDER_ID": {"type": "NUMBER", "index": 1, "name": "ORDER_ID"},
                        "ORDERED_AT": {
                            "type": "DATE",
                            "index": 2,
                            "name": "ORDERED_AT",
                            "comment": "When it was placed",
                        },
                        "CUSTOMER_ID": {"type": "NUMBER", "index": 3, "name": "CUSTOMER_ID"},
                        "AMOUNT": {"type": "NUMBER(10,2)", "index": 4, "name": "AMOUNT"},
                    },
                }
            },
            "sources": {
                f"source.{PROJECT}.jaffle_shop.customers": {
                    "metadata": {"type": "BASE TABLE", "comment": "raw customers"},
                    "columns": {"ID": {"type": "NUMBER", "index": 1, "name": "ID"}},
                }
            },
        },
    )
    cat = Catalog.from_dbt(target)
    db = PROJECT
    assert sorted(t.name for t in cat.tables)[:3] == [
        "analytics.marts.customers",
        "analytics.marts.orders",
        "analytics.seeds.countries",
    ]
    # The warehouse's order and types; the manifest's names, declared types and descriptions.
    assert _columns(cat, db, "analytics.marts.orders") == [
        ("order_id", "integer", ""),
        ("ORDERED_AT", "date", "When it was placed"),
        ("customer_id", "number", "Who ordered"),
        ("amount", "numeric", "Order total in dollars"),
    ]
    raw = cat.find_table(db, "raw.jaffle_shop.raw_customers")
    assert raw is not None
    assert cat.table(raw).description == "One row per customer, as the app writes it"
    assert _primary_key(cat, db, "analytics.marts.orders") == ["order_id"]
    assert _primary_key(cat, db, "analytics.marts.customers") == ["customer_id"]
    assert (
        f"{db}.analytics.marts.orders.customer_id",
        f"{db}.analytics.marts.customers.customer_id",
    ) in _keys(cat)
    assert cat.num_foreign_keys == 3
    # The catalog.json is read only when asked or found beside the manifest.
    alone = Catalog.from_dbt(target / "manifest.json", "shop")
    assert [c[0] for c in _columns(alone, "shop", "analytics.marts.orders")] == [
        "order_id",
        "customer_id",
        "amount",
    ]


def _broken(version: int, change: Any) -> dict[str, Any]:
    manifest = _manifest(version, "analytics")
    change(manifest)
    return manifest


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            lambda m: m["metadata"].pop("dbt_schema_version"),
            "not a dbt manifest",
        ),
        (
            lambda m: m["metadata"].update(
                dbt_schema_version="https://schemas.getdbt.com/dbt/manifest/v4.json"
            ),
            "dbt manifest schema v4; tabret reads v7 to v12",
        ),
        (
            lambda m: m["nodes"][f"model.{PROJECT}.orders"].update(schema=3),
            rf"node 'model\.{PROJECT}\.orders': field 'schema' is int 3, not a name",
        ),
        (
            lambda m: m["nodes"][f"model.{PROJECT}.customers"]["columns"].update(bad=[1]),
            rf"node 'model\.{PROJECT}\.customers': column 'bad' is list",
        ),
        (
            lambda m: m["nodes"][f"test.{PROJECT}.rel_orders"]["test_metadata"]["kwargs"].update(
                to="customers"
            ),
            rf"node 'test\.{PROJECT}\.rel_orders': 'test_metadata\.kwargs\.to' is 'customers', "
            r"not ref\(\.\.\.\)",
        ),
        (
            lambda m: m["nodes"][f"test.{PROJECT}.rel_orders"]["test_metadata"]["kwargs"].update(
                to="ref('clients')"
            ),
            rf"node 'test\.{PROJECT}\.rel_orders': 'test_metadata\.kwargs\.to' "
            r"\"ref\('clients'\)\" names nothing in the manifest",
        ),
        (
            lambda m: m["nodes"][f"test.{PROJECT}.rel_orders"]["test_metadata"]["kwargs"].pop(
                "field"
            ),
            rf"node 'test\.{PROJECT}\.rel_orders': 'test_metadata\.kwargs\.field' is missing",
        ),
    ],
)
def test_dbt_malformed_manifest_names_file_node_and_field(
    tmp_path: Path, change: Any, message: str
) -> None:
    path = _write(tmp_path / "manifest.json", _broken(7, change))
    cat = Catalog()
    with pytest.raises(SchemaError, match=rf"manifest\.json: {message}"):
        cat.add_dbt(path)
    assert cat.num_databases == 0


def test_dbt_invalid_json_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "manifest.json"
    path.write_text('{"metadata": {},\n "nodes": {,}}\n')
    with pytest.raises(ParseError, match=r"manifest\.json:2: invalid JSON") as caught:
        Catalog.from_dbt(path)
    assert caught.value.line == 2
    with pytest.raises(FileError, match=r"nothing[/\\]manifest\.json: no such file"):
        Catalog.from_dbt(tmp_path / "nothing" / "manifest.json")


# --- INFORMATION_SCHEMA exports ---------------------------------------------------------------

#: Snowflake's COLUMNS view joined to TABLES for the table comment, as docs/catalog.md's SQL
#: writes it (upper-case names, a comment with a comma and a line break, positions unsorted).
SNOWFLAKE_COLUMNS = """\
TABLE_CATALOG,TABLE_SCHEMA,TABLE_NAME,COLUMN_NAME,ORDINAL_POSITION,DATA_TYPE,IS_NULLABLE,COLUMN_DEFAULT,COMMENT,TABLE_COMMENT
ANALYTICS,SALES,ORDERS,ORDER_ID,1,NUMBER,NO,,,"One row per order"
ANALYTICS,SALES,ORDERS,AMOUNT,3,"NUMBER(10,2)",YES,0,"Total, in dollars
before tax","One row per order"
ANALYTICS,SALES,ORDERS,CUSTOMER_ID,2,NUMBER,YES,,,"One row per order"
ANALYTICS,CRM,CUSTOMERS,ID,1,NUMBER,NO,,,
ANALYTICS,CRM,CUSTOMERS,NAME,2,TEXT,YES,,Full name,
"""
SNOWFLAKE_KEYS = """\
CONSTRAINT_TYPE,TABLE_CATALOG,TABLE_SCHEMA,TABLE_NAME,COLUMN_NAME,ORDINAL_POSITION,CONSTRAINT_NAME,REFERENCED_TABLE_CATALOG,REFERENCED_TABLE_SCHEMA,REFERENCED_TABLE_NAME,REFERENCED_COLUMN_NAME
PRIMARY KEY,ANALYTICS,SALES,ORDERS,ORDER_ID,1,PK_ORDERS,,,,
PRIMARY KEY,ANALYTICS,CRM,CUSTOMERS,ID,1,PK_CUSTOMERS,,,,
FOREIGN KEY,ANALYTICS,SALES,ORDERS,CUSTOMER_ID,1,FK_CUSTOMER,ANALYTICS,CRM,CUSTOMERS,ID
"""


def test_information_schema_csv_with_keys(tmp_path: Path) -> None:
    (tmp_path / "columns.csv").write_text(SNOWFLAKE_COLUMNS)
    (tmp_path / "keys.csv").write_text(SNOWFLAKE_KEYS)
    cat = Catalog.from_information_schema(tmp_path / "columns.csv", keys=tmp_path / "keys.csv")
    assert [d.name for d in cat.databases] == ["ANALYTICS"]
    assert [t.name for t in cat.tables] == ["SALES.ORDERS", "CRM.CUSTOMERS"]
    assert _columns(cat, "analytics", "sales.orders") == [
        ("ORDER_ID", "number", ""),
        ("CUSTOMER_ID", "number", ""),
        ("AMOUNT", "number(10,2)", "Total, in dollars\nbefore tax"),
    ]
    orders = cat.find_table("analytics", "sales.orders")
    assert orders is not None
    assert cat.table(orders).description == "One row per order"
    assert _column(cat, "analytics", "sales.orders", "order_id").not_null
    assert _column(cat, "analytics", "sales.orders", "amount").default == "0"
    assert _primary_key(cat, "analytics", "crm.customers") == ["ID"]
    assert _keys(cat) == {("ANALYTICS.SALES.ORDERS.CUSTOMER_ID", "ANALYTICS.CRM.CUSTOMERS.ID")}
    # A directory holding columns.csv and keys.csv reads the same.
    assert Catalog.from_information_schema(tmp_path) == cat
    # A keys export without the TABLE_CATALOG fields matches tables by schema and name.
    uncataloged = tmp_path / "uncataloged.csv"
    uncataloged.write_text(
        "constraint_type,table_schema,table_name,column_name,referenced_table_schema,"
        "referenced_table_name,referenced_column_name\n"
        "FOREIGN KEY,SALES,ORDERS,CUSTOMER_ID,CRM,CUSTOMERS,ID\n"
    )
    again = Catalog.from_information_schema(tmp_path / "columns.csv", keys=uncataloged)
    assert _keys(again) == _keys(cat)


def test_information_schema_bigquery_json(tmp_path: Path) -> None:
    """BigQuery's lower-case names, numbers as strings, descriptions from COLUMN_FIELD_PATHS;
    two projects, so names carry the project; JSON lines and a JSON array alike."""
    rows = [
        {"table_catalog": "shop-prod", "table_schema": "sales", "table_name": "orders",
         "column_name": "id", "ordinal_position": "1", "data_type": "INT64",
         "is_nullable": "NO", "description": "order id"},
        {"table_catalog": "shop-prod", "table_schema": "sales", "table_name": "orders",
         "column_name": "items", "ordinal_position": "2",
         "data_type": "ARRAY<STRUCT<sku STRING, qty INT64>>", "is_nullable": "YES",
         "description": None},
        {"table_catalog": "public-data", "table_schema": "geo", "table_name": "countries",
         "column_name": "code", "ordinal_position": 1, "data_type": "STRING"},
    ]  # fmt: skip
    lines = tmp_path / "bq.jsonl"
    lines.write_text("".join(json.dumps(r) + "\n" for r in rows))
    cat = Catalog.from_information_schema(lines, "warehouse")
    assert [t.name for t in cat.tables] == ["shop-prod.sales.orders", "public-data.geo.countries"]
    assert _columns(cat, "warehouse", "shop-prod.sales.orders") == [
        ("id", "int64", "order id"),
        ("items", "array<struct<sku string, qty int64>>", ""),
    ]
    array = tmp_path / "bq.json"
    array.write_text(json.dumps(rows))
    assert Catalog.from_information_schema(array, "warehouse") == cat
    # Without a name: two catalogs, so the file's stem.
    assert [d.name for d in Catalog.from_information_schema(array).databases] == ["bq"]


@pytest.mark.parametrize(
    ("name", "text", "error", "message"),
    [
        ("c.csv", "TABLE_SCHEMA,TABLE_NAME\ns,t\n", SchemaError, r"c\.csv:2: no COLUMN_NAME"),
        (
            "c.csv",
            "TABLE_SCHEMA,TABLE_NAME,COLUMN_NAME\ns,t,a\ns,t\n",
            ParseError,
            r"c\.csv:3: 2 fields, the header has 3",
        ),
        (
            "c.csv",
            'TABLE_SCHEMA,TABLE_NAME,COLUMN_NAME\ns,t,"a\n',
            ParseError,
            r"c\.csv:\d: invalid CSV",
        ),
        (
            "c.csv",
            "TABLE_SCHEMA,TABLE_NAME,COLUMN_NAME,ORDINAL_POSITION\ns,t,a,first\n",
            ParseError,
            r"c\.csv:2: ORDINAL_POSITION is not an integer: 'first'",
        ),
        (
            "c.jsonl",
            '{"table_schema": "s", "table_name": "t", "column_name": "a"}\n{"table_schema": \n',
            ParseError,
            r"c\.jsonl:2: invalid JSON",
        ),
        ("c.jsonl", '{"a": 1}\n"s"\n', SchemaError, r"c\.jsonl:2: the line is not a JSON object"),
        ("c.json", '["s"]', SchemaError, r"c\.json:1: entry 0 is not a JSON object"),
        (
            "c.csv",
            "TABLE_SCHEMA,TABLE_NAME,COLUMN_NAME\ns,t,a\ns,t,A\n",
            SchemaError,
            r"c\.csv: duplicate column 'A'.*nothing was added",
        ),
        ("c.txt", "x", FileError, r"c\.txt: an INFORMATION_SCHEMA export is a \.csv"),
        ("c.csv", "", ParseError, r"c\.csv:1: no header row"),
    ],
)
def test_information_schema_malformed_names_file_and_line(
    tmp_path: Path, name: str, text: str, error: type[Exception], message: str
) -> None:
    path = tmp_path / name
    path.write_text(text)
    cat = Catalog()
    with pytest.raises(error, match=message):
        cat.add_information_schema(path)
    assert cat.num_databases == 0


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ("FOREIGN KEY,ANALYTICS,SALES,ORDERS,CUSTOMER_ID,1,FK,ANALYTICS,CRM,CLIENTS,ID",
         r"keys\.csv:2: table 'ANALYTICS\.CRM\.CLIENTS' is not in the columns export"),
        ("FOREIGN KEY,ANALYTICS,SALES,ORDERS,CUSTOMER_ID,1,FK,ANALYTICS,CRM,CUSTOMERS,NUM",
         r"keys\.csv:2: table 'CRM\.CUSTOMERS' has no column 'NUM'"),
        ("PRIMARY KEY,ANALYTICS,SALES,ORDERS,ORDER_NO,1,PK,,,,",
         r"keys\.csv:2: table 'SALES\.ORDERS' has no column 'ORDER_NO'"),
    ],
)  # fmt: skip
def test_information_schema_keys_name_the_line(tmp_path: Path, row: str, message: str) -> None:
    (tmp_path / "columns.csv").write_text(SNOWFLAKE_COLUMNS)
    header = SNOWFLAKE_KEYS.splitlines()[0]
    (tmp_path / "keys.csv").write_text(f"{header}\n{row}\n")
    with pytest.raises(SchemaError, match=message):
        Catalog.from_information_schema(tmp_path)


# --- tabret catalog / tabret index ------------------------------------------------------------


def test_cli_catalog_reads_each_source(
    tmp_path: Path, shop_duckdb: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "target"
    _write(target / "manifest.json", _manifest(12, "raw"))
    export = tmp_path / "export"
    export.mkdir()
    (export / "columns.csv").write_text(SNOWFLAKE_COLUMNS)
    (export / "keys.csv").write_text(SNOWFLAKE_KEYS)
    expected = {
        ("duckdb", str(shop_duckdb)): {"tables": 5, "columns": 14, "foreign_keys": 3},
        ("dbt", str(target)): {"tables": 6, "columns": 11, "foreign_keys": 3},
        ("information-schema", str(export)): {"tables": 2, "columns": 5, "foreign_keys": 1},
    }
    for (kind, source), counts in expected.items():
        saved = tmp_path / f"{kind}.json"
        assert main(["catalog", kind, source, "--json", "--save", str(saved)]) == 0
        assert json.loads(capsys.readouterr().out) == {"databases": 1, **counts}
        assert Catalog.from_json(saved).num_tables == counts["tables"]
    assert main(["catalog", "duckdb", str(target / "manifest.json")]) == 1
    assert "manifest.json: not a DuckDB database" in capsys.readouterr().err


def test_cli_index_over_a_dbt_project(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tabret import DenseRetriever, TableIndex

    path = _write(tmp_path / "manifest.json", _manifest(12, "raw"))
    out = tmp_path / "idx"
    args = ["index", "dbt", str(path), str(out), "--embedder", "hashing", "--quiet"]
    assert main(args) == 0
    capsys.readouterr()
    index = TableIndex.load(out)
    hits = DenseRetriever(index).retrieve("lifetime value of each customer", k=1)
    assert hits.tables[0].name == f"{PROJECT}.analytics.marts.customers"
