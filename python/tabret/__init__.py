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
    ScoringError,
    Table,
    TemplateError,
    __version__,
)
from tabret.adaptive import AdaptiveRetriever, CallableScorer, SimilarityScorer
from tabret.catalog import Catalog
from tabret.copies import collapse_copies
from tabret.crush import CrushRetriever
from tabret.datasets import Question, demo_catalog, demo_questions
from tabret.embedders import (
    HashingEmbedder,
    OpenAICompatibleEmbedder,
    SentenceTransformerEmbedder,
)
from tabret.embedding_cache import DiskCachedEmbedder
from tabret.families import Families, collapse_families
from tabret.index import (
    BaseRetriever,
    DenseRetriever,
    LexicalRetriever,
    Retriever,
    TableIndex,
    load_saved,
)
from tabret.join import (
    ColumnStats,
    GreedyJoinRetriever,
    JarExactRetriever,
    JoinClosure,
    JoinGraph,
    column_stats_from_database,
    jar_column_stats,
)
from tabret.keys import (
    InferredKey,
    catalog_without_keys,
    infer_foreign_keys,
    with_foreign_keys,
)
from tabret.murre import MurreRetriever
from tabret.pipeline import DatabaseRouter, Fusion, Pipeline
from tabret.results import Retrieval, ScoredColumn, ScoredTable, TraceStep
from tabret.reverse import GeneratedQuestions, ReverseRetriever
from tabret.tuning import default_retriever, load_default

__all__ = [
    "AdaptiveRetriever",
    "BaseRetriever",
    "CachedEmbedder",
    "CallableScorer",
    "Catalog",
    "Column",
    "ColumnStats",
    "CrushRetriever",
    "Database",
    "DatabaseRouter",
    "DenseRetriever",
    "DiskCachedEmbedder",
    "EmbeddingError",
    "Error",
    "Families",
    "FileError",
    "ForeignKey",
    "Fusion",
    "GeneratedQuestions",
    "GreedyJoinRetriever",
    "HashingEmbedder",
    "InferredKey",
    "JarExactRetriever",
    "JoinClosure",
    "JoinGraph",
    "LLMError",
    "LLMParseError",
    "LexicalRetriever",
    "MissingRecordingError",
    "MurreRetriever",
    "OpenAICompatibleEmbedder",
    "ParseError",
    "Pipeline",
    "Question",
    "Retrieval",
    "Retriever",
    "ReverseRetriever",
    "SchemaError",
    "ScoredColumn",
    "ScoredTable",
    "ScoringError",
    "SentenceTransformerEmbedder",
    "SimilarityScorer",
    "Table",
    "TableIndex",
    "TemplateError",
    "TraceStep",
    "__version__",
    "catalog_without_keys",
    "collapse_copies",
    "collapse_families",
    "column_stats_from_database",
    "default_retriever",
    "demo_catalog",
    "demo_questions",
    "infer_foreign_keys",
    "jar_column_stats",
    "load_default",
    "load_saved",
    "with_foreign_keys",
]
