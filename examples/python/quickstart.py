"""Load a catalog, look a table up, and print it the ways retrievers embed it."""

import tabret

cat = tabret.demo_catalog()
print(cat)
t = cat.find_table("library", "loan")
assert t is not None
print(cat.serialize_table(t))
print(cat.serialize_table(t, "words", "original"))
print(cat.serialize_table(t, "ddl"))
for q in tabret.demo_questions()[:3]:
    print(q.question, "->", ", ".join(q.gold_tables))
