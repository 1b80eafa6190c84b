"""tabret: find the few tables (and columns) a text-to-SQL question needs in a large catalog."""

from tabret._core import (
    CachedEmbedder,
    Column,
    Database,
    EmbeddingError,
    Error,
    FileError,
    ForeignKey,
    LLMError,
    LLMParseError,
    MissingRecordingError,
    ParseError,
    SchemaError,
    Table,
    TemplateError,
    __version__,
)
from tabret.catalog import Catalog
from tabret.datasets import Question, demo_catalog, demo_questions
from tabret.embedders import HashingEmbedder, SentenceTransformerEmbedder
from tabret.index import DenseRetriever, LexicalRetriever, TableIndex
from tabret.murre import MurreRetriever
from tabret.results import Retrieval, ScoredColumn, ScoredTable, TraceStep

__all__ = [
    "CachedEmbedder",
    "Catalog",
    "Column",
    "Database",
    "DenseRetriever",
    "EmbeddingError",
    "Error",
    "FileError",
    "ForeignKey",
    "HashingEmbedder",
    "LLMError",
    "LLMParseError",
    "LexicalRetriever",
    "MissingRecordingError",
    "MurreRetriever",
    "ParseError",
    "Question",
    "Retrieval",
    "SchemaError",
    "ScoredColumn",
    "ScoredTable",
    "SentenceTransformerEmbedder",
    "Table",
    "TableIndex",
    "TemplateError",
    "TraceStep",
    "__version__",
    "demo_catalog",
    "demo_questions",
]
