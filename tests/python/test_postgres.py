"""Catalog.from_sqlalchemy against a real PostgreSQL server started for these tests.

The server comes from Debian's ``postgresql`` package (``make test`` installs it): a throwaway
cluster in a temporary directory, on a free localhost port, stopped afterwards. Missing server
binaries skip locally and fail under CI=true.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tabret import Catalog, Error, SchemaError
from tabret.join import column_stats_from_database

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from bench.postgres_cluster import server_bin, throwaway_cluster

sqlalchemy = pytest.importorskip("sqlalchemy")

SCHEMA = """
CREATE TABLE department (
  dept_id integer PRIMARY KEY,
  name varchar(80) NOT NULL UNIQUE
);
COMMENT ON TABLE department IS 'Company departments';
CREATE TABLE employee (
  emp_id serial PRIMARY KEY,
  full_name text NOT NULL,
  salary numeric(10, 2),
  hired date DEFAULT CURRENT_DATE,
  dept_id integer REFERENCES department (dept_id)
);
COMMENT ON COLUMN employee.salary IS 'Yearly salary in euros';
CREATE TABLE project (
  code char(6),
  phase smallint,
  title text,
  PRIMARY KEY (code, phase)
);
CREATE TABLE assignment (
  emp_id integer REFERENCES employee (emp_id),
  code char(6),
  phase smallint,
  hours real,
  PRIMARY KEY (emp_id, code, phase),
  FOREIGN KEY (code, phase) REFERENCES project (code, phase)
);
INSERT INTO department VALUES (1, 'Sales'), (2, 'Research'), (3, 'Legal');
INSERT INTO employee (full_name, salary, hired, dept_id) VALUES
  ('Ada', 5000, '2020-01-01', 2), ('Bo', 4000, '2021-02-01', 2), ('Cy', NULL, NULL, 1),
  ('Di', 4000, '2022-03-01', NULL);
CREATE SCHEMA audit;
CREATE TABLE audit.log (id bigint PRIMARY KEY, emp_id integer REFERENCES public.employee (emp_id));
"""


@pytest.fixture(scope="module")
def postgres_url() -> Iterator[str]:
    bindir = server_bin()
    if bindir is None:
        if os.environ.get("CI") == "true":
            pytest.fail("PostgreSQL server binaries missing under CI (apt-get install postgresql)")
        pytest.skip("PostgreSQL server not installed (Debian package 'postgresql')")
    pytest.importorskip("psycopg")
    with throwaway_cluster(bindir) as cluster:
        url = f"{cluster.url}/postgres"
        engine = sqlalchemy.create_engine(url)
        with engine.begin() as conn:
            conn.exec_driver_sql(SCHEMA)
        engine.dispose()
        yield url


def test_postgres_tables_columns_types_keys(postgres_url: str) -> None:
    cat = Catalog.from_sqlalchemy(postgres_url, "hr")
    assert [d.name for d in cat.databases] == ["hr"]
    tables = {t.name: t for t in cat.tables}
    assert sorted(tables) == ["assignment", "department", "employee", "project"]
    assert tables["department"].description == "Company departments"

    def cols(table: str) -> list[tuple[str, str]]:
        return [(cat.column(c).name, cat.column(c).type) for c in tables[table].columns]

    assert cols("employee") == [
        ("emp_id", "integer"),
        ("full_name", "text"),
        ("salary", "numeric(10, 2)"),
        ("hired", "date"),
        ("dept_id", "integer"),
    ]
    assert cols("project") == [("code", "char(6)"), ("phase", "smallint"), ("title", "text")]
    assert cols("assignment")[-1] == ("hours", "real")
    salary = cat.find_column(cat.find_table("hr", "employee") or 0, "salary")
    assert salary is not None
    assert cat.column(salary).description == "Yearly salary in euros"

    def pk(table: str) -> list[str]:
        return [cat.column(c).name for c in tables[table].primary_key]

    assert pk("employee") == ["emp_id"]
    assert pk("project") == ["code", "phase"]
    assert pk("assignment") == ["emp_id", "code", "phase"]

    fks = sorted(
        (cat.qualified_column_name(k.from_column), cat.qualified_column_name(k.to_column))
        for k in cat.foreign_keys
    )
    assert fks == [
        ("hr.assignment.code", "hr.project.code"),
        ("hr.assignment.emp_id", "hr.employee.emp_id"),
        ("hr.assignment.phase", "hr.project.phase"),
        ("hr.employee.dept_id", "hr.department.dept_id"),
    ]
    # Naming the default schema explicitly keeps its keys (they are reported schema-less).
    pub = Catalog.from_sqlalchemy(postgres_url, "hr", schema="public")
    # The one difference: PostgreSQL qualifies a sequence default when the schema is named.
    emp_id = cat.find_column(cat.find_table("hr", "employee") or 0, "emp_id")
    assert emp_id is not None
    assert pub.column(emp_id).default == "nextval('\"public\".employee_emp_id_seq'::regclass)"
    pub.set_constraints(emp_id, not_null=True, default=cat.column(emp_id).default)
    assert pub == cat


def test_postgres_other_schema_and_errors(postgres_url: str) -> None:
    cat = Catalog.from_sqlalchemy(postgres_url, schema="audit")
    assert [d.name for d in cat.databases] == ["audit"]
    # The cross-schema foreign key to public.employee is not part of this database.
    assert [t.name for t in cat.tables] == ["log"]
    assert cat.num_foreign_keys == 0
    with pytest.raises(SchemaError, match="duplicate database 'audit'"):
        cat.add_sqlalchemy(postgres_url, schema="audit")
    bad = postgres_url.rsplit("/", 1)[0] + "/no_such_db"
    with pytest.raises(Exception, match="no_such_db"):
        Catalog.from_sqlalchemy(bad)


def test_postgres_column_stats(postgres_url: str) -> None:
    cat = Catalog.from_sqlalchemy(postgres_url, "hr")
    stats = column_stats_from_database(cat, postgres_url, "hr", max_values=2)

    def col(table: str, name: str) -> int:
        c = cat.find_column(cat.find_table("hr", table) or 0, name)
        assert c is not None
        return c

    assert stats.known == 7  # department and employee; project and assignment are empty
    assert stats.uniqueness(col("department", "dept_id")) == 1.0
    names = stats.values(col("department", "name"))
    assert len(names) == 2
    assert set(names) < {"Sales", "Research", "Legal"}
    # 4 rows, distinct non-null dept_id {1, 2}: 2 / 4; nulls are not values.
    assert stats.uniqueness(col("employee", "dept_id")) == 0.5
    assert sorted(stats.values(col("employee", "dept_id"))) == ["1", "2"]
    assert len(stats.values(col("employee", "full_name"))) == 2  # max_values
    # An empty table: uniqueness unknown, no values.
    assert stats.uniqueness(col("assignment", "hours")) is None
    assert stats.values(col("assignment", "hours")) == []
    # Reading a table the server does not have names it.
    other = Catalog.from_sqlalchemy(postgres_url, schema="audit")
    with pytest.raises(Error, match="table 'log'"):
        column_stats_from_database(other, postgres_url, "audit")
    audit = column_stats_from_database(other, postgres_url, "audit", schema="audit")
    assert len(audit) == 2
    assert audit.known == 0


def test_postgres_constraints_and_prompt_text(postgres_url: str) -> None:
    """The issue's job on a real server: own database -> catalog -> retrieval -> SQL prompt
    with the COMMENTs, NOT NULL, UNIQUE, DEFAULT and sample values of the live data."""
    from tabret import DenseRetriever, HashingEmbedder, TableIndex

    cat = Catalog.from_sqlalchemy(postgres_url, "hr")

    def constraints(table: str) -> list[tuple[str, bool, bool, str]]:
        t = cat.table(cat.find_table("hr", table) or 0)
        return [
            (
                cat.column(c).name,
                cat.column(c).not_null,
                cat.column(c).unique,
                cat.column(c).default,
            )
            for c in t.columns
        ]

    assert constraints("department") == [
        ("dept_id", True, False, ""),  # a primary key column is reflected NOT NULL
        ("name", True, True, ""),
    ]
    assert constraints("employee") == [
        ("emp_id", True, False, "nextval('employee_emp_id_seq'::regclass)"),
        ("full_name", True, False, ""),
        ("salary", False, False, ""),
        ("hired", False, False, "CURRENT_DATE"),
        ("dept_id", False, False, ""),
    ]
    stats = column_stats_from_database(cat, postgres_url, "hr", max_values=5)
    index = TableIndex.build(cat, HashingEmbedder())
    res = DenseRetriever(index).retrieve("salary of employees per department name", 2)
    assert {t.name for t in res.tables} == {"hr.employee", "hr.department"}
    prompt = res.to_prompt(cat, samples=2, stats=stats)
    assert "-- Company departments\nCREATE TABLE department (" in prompt
    assert "  name varchar(80) NOT NULL UNIQUE,  -- e.g. '" in prompt
    assert "  hired date DEFAULT CURRENT_DATE,  -- e.g. '20" in prompt, prompt
    # DISTINCT gives no order: the two salaries in either.
    assert re.search(
        r"^  salary numeric\(10, 2\),  -- Yearly salary in euros\. "
        r"e\.g\. (4000\.00, 5000\.00|5000\.00, 4000\.00)$",
        prompt,
        re.MULTILINE,
    ), prompt
