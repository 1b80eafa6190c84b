"""tabret: find the few tables (and columns) a text-to-SQL question needs in a large catalog."""

from tabret._core import (
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
from tabret.crush import CrushRetriever
from tabret.datasets import Question, demo_catalog, demo_questions
from tabret.embedders import (
    HashingEmbedder,
    OpenAICompatibleEmbedder,
    SentenceTransformerEmbedder,
)
from tabret.index import DenseRetriever, LexicalRetriever, TableIndex
from tabret.results import Retrieval, ScoredColumn, ScoredTable, TraceStep
from tabret.reverse import GeneratedQuestions, ReverseRetriever

__all__ = [
    "Catalog",
    "Column",
    "CrushRetriever",
    "Database",
    "DenseRetriever",
    "EmbeddingError",
    "Error",
    "FileError",
    "ForeignKey",
    "GeneratedQuestions",
    "HashingEmbedder",
    "LLMError",
    "LLMParseError",
    "LexicalRetriever",
    "MissingRecordingError",
    "OpenAICompatibleEmbedder",
    "ParseError",
    "Question",
    "Retrieval",
    "ReverseRetriever",
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
