"""tabret: find the few tables (and columns) a text-to-SQL question needs in a large catalog."""

from tabret._core import (
    Column,
    Database,
    Error,
    FileError,
    ForeignKey,
    ParseError,
    SchemaError,
    Table,
    __version__,
)
from tabret.catalog import Catalog
from tabret.datasets import Question, demo_catalog, demo_questions

__all__ = [
    "Catalog",
    "Column",
    "Database",
    "Error",
    "FileError",
    "ForeignKey",
    "ParseError",
    "Question",
    "SchemaError",
    "Table",
    "__version__",
    "demo_catalog",
    "demo_questions",
]
