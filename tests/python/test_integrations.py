"""The LangChain and LlamaIndex adapters, run against the real packages with fake LLMs."""

from __future__ import annotations

from typing import Any

import pytest

from tabret import DenseRetriever, HashingEmbedder, TableIndex, demo_catalog
from tabret.integrations import table_documents

QUESTION = "Which customers placed orders last month?"


@pytest.fixture(scope="module")
def retriever() -> DenseRetriever:
    return DenseRetriever(TableIndex.build(demo_catalog(), HashingEmbedder(), progress=False))


def test_table_documents_carry_text_ids_and_trace(retriever: DenseRetriever) -> None:
    res = retriever.retrieve(QUESTION, 3)
    docs = table_documents(retriever, QUESTION, 3)
    assert [d.metadata["qualified_name"] for d in docs] == res.table_names
    assert [d.metadata["rank"] for d in docs] == [0, 1, 2]
    first = docs[0]
    assert first.id == f"tabret:{res.tables[0].name}"
    assert f"\nCREATE TABLE {first.metadata['table']} (\n" in first.content  # after the comment
    assert first.content == retriever.index.catalog.serialize_table(res.tables[0].id, format="ddl")
    assert first.metadata["trace"][0]["step"] == "dense"
    assert first.metadata["score"] == pytest.approx(res.tables[0].score)
    # Stable ids: the same question gives the same documents.
    assert table_documents(retriever, QUESTION, 3) == docs


def test_table_documents_rejects_non_string(retriever: DenseRetriever) -> None:
    with pytest.raises(TypeError, match="question must be a str"):
        table_documents(retriever, ["a", "b"], 3)  # type: ignore[arg-type]


def test_langchain_chain_with_fake_llm(retriever: DenseRetriever) -> None:
    from langchain_core.documents import Document
    from langchain_core.language_models.fake import FakeListLLM
    from langchain_core.output_parsers import StrOutputParser
    from langchain_core.prompt_values import PromptValue
    from langchain_core.prompts import PromptTemplate
    from langchain_core.runnables import RunnableLambda, RunnablePassthrough

    from tabret.integrations.langchain import TabretRetriever

    lc = TabretRetriever(retriever=retriever, k=3)
    docs = lc.invoke(QUESTION)
    assert all(isinstance(d, Document) for d in docs)
    assert [d.metadata["qualified_name"] for d in docs] == retriever.retrieve(
        QUESTION, 3
    ).table_names
    assert docs[0].id == f"tabret:{docs[0].metadata['qualified_name']}"

    prompts: list[str] = []

    def join(ds: list[Document]) -> str:
        return "\n\n".join(d.page_content for d in ds)

    def record(prompt: PromptValue) -> PromptValue:
        prompts.append(prompt.to_string())
        return prompt

    llm = FakeListLLM(responses=["SELECT 1"])
    chain = (
        {
            "schema": lc | RunnableLambda(join),
            "question": RunnablePassthrough(),
        }
        | PromptTemplate.from_template("{schema}\n-- {question}\nSQL:")
        | RunnableLambda(record)
        | llm
        | StrOutputParser()
    )
    assert chain.invoke(QUESTION) == "SELECT 1"
    assert len(prompts) == 1
    for d in docs:
        assert d.page_content in prompts[0]


def test_langchain_rejects_bad_k(retriever: DenseRetriever) -> None:
    from pydantic import ValidationError

    from tabret.integrations.langchain import TabretRetriever

    with pytest.raises(ValidationError):
        TabretRetriever(retriever=retriever, k=0)


def test_llama_index_query_engine_with_mock_llm(retriever: DenseRetriever) -> None:
    from llama_index.core.llms import MockLLM
    from llama_index.core.query_engine import RetrieverQueryEngine
    from llama_index.core.schema import MetadataMode, NodeWithScore

    from tabret.integrations.llama_index import TabretRetriever

    li = TabretRetriever(retriever, k=3)
    nodes = li.retrieve(QUESTION)
    expected = retriever.retrieve(QUESTION, 3)
    assert all(isinstance(n, NodeWithScore) for n in nodes)
    assert [n.node.node_id for n in nodes] == [f"tabret:{t.name}" for t in expected.tables]
    assert [n.score for n in nodes] == pytest.approx([t.score for t in expected.tables])
    llm_text = nodes[0].node.get_content(MetadataMode.LLM)
    assert "CREATE TABLE" in llm_text
    assert "trace" not in llm_text  # bookkeeping stays out of the LLM's view

    engine = RetrieverQueryEngine.from_args(li, llm=MockLLM())
    response = engine.query(QUESTION)
    assert [n.node.node_id for n in response.source_nodes] == [n.node.node_id for n in nodes]


def test_llama_index_rejects_bad_k(retriever: DenseRetriever) -> None:
    from tabret.integrations.llama_index import TabretRetriever

    with pytest.raises(ValueError, match="k must be positive"):
        TabretRetriever(retriever, k=0)


class _Counting(DenseRetriever):
    """A dense retriever that counts its native calls and the questions in each."""

    def __init__(self, index: TableIndex) -> None:
        super().__init__(index)
        self.calls: list[int] = []
        self.on_event_loop = False

    def _raw(self, batch: list[str], k: int, k_columns: int) -> list[Any]:
        import asyncio

        self.calls.append(len(batch))
        try:
            asyncio.get_running_loop()
            self.on_event_loop = True  # native work here would block the loop
        except RuntimeError:
            pass
        return super()._raw(batch, k, k_columns)


def _same_documents(got: list[list[Any]], want: list[list[Any]]) -> None:
    """The same documents, with scores equal up to float rounding (a batch of questions is
    scored by one matrix product, one question by a vector product)."""
    assert [[d.id for d in docs] for docs in got] == [[d.id for d in docs] for docs in want]
    flat_got = [d for docs in got for d in docs]
    for g, w in zip(flat_got, [d for docs in want for d in docs], strict=True):
        assert g.page_content == w.page_content
        assert g.metadata["score"] == pytest.approx(w.metadata["score"], rel=1e-5)
        assert {**g.metadata, "score": 0, "trace": 0} == {**w.metadata, "score": 0, "trace": 0}


def test_langchain_batch_is_one_native_call(retriever: DenseRetriever) -> None:
    import asyncio

    pytest.importorskip("langchain_core")
    from tabret.integrations.langchain import TabretRetriever

    beds = "How many beds per ward?"
    questions = [beds, "Which patients saw a doctor?", beds]
    counting = _Counting(retriever.index)
    lc = TabretRetriever(retriever=counting, k=3)
    one_by_one = [lc.invoke(q) for q in questions]
    assert counting.calls == [1, 1, 1]
    counting.calls.clear()
    _same_documents(lc.batch(questions), one_by_one)
    assert counting.calls == [2]  # the distinct questions, once
    counting.calls.clear()
    _same_documents(asyncio.run(lc.abatch(questions)), one_by_one)
    assert counting.calls == [2]
    assert not counting.on_event_loop  # abatch retrieves off the event loop, as ainvoke does
    counting.calls.clear()
    assert lc.invoke(questions[0]) == one_by_one[0]  # outside a batch: its own call again
    assert counting.calls == [1]
