from __future__ import annotations

import collections

import tabret


def test_demo_catalog_shape() -> None:
    cat = tabret.demo_catalog()
    assert 5 <= cat.num_databases <= 8
    assert 40 <= cat.num_tables <= 80
    assert cat.num_foreign_keys >= cat.num_tables // 2
    assert all(t.primary_key for t in cat.tables)
    assert all(t.description for t in cat.tables)


def test_demo_questions_reference_existing_tables() -> None:
    cat = tabret.demo_catalog()
    questions = tabret.demo_questions()
    assert 25 <= len(questions) <= 40
    assert len({q.id for q in questions}) == len(questions)
    for q in questions:
        for name in q.gold_tables:
            db, table = name.split(".")
            assert db == q.db, q.id
            assert cat.find_table(db, table) is not None, (q.id, name)
    sizes = collections.Counter(len(q.gold_tables) for q in questions)
    assert sizes[1] >= 5
    assert sum(v for k, v in sizes.items() if k >= 3) >= 5
    assert {q.db for q in questions} == {d.name for d in cat.databases}


def test_demo_sql_runs_and_uses_exactly_the_gold_tables() -> None:
    """scripts/check_demo.py builds every demo database in SQLite and runs the gold SQL."""
    import subprocess
    import sys
    from pathlib import Path

    script = Path(__file__).resolve().parents[2] / "scripts" / "check_demo.py"
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "questions: 36" in result.stdout
