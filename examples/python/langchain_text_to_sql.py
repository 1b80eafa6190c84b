"""tabret inside a LangChain text-to-SQL chain: the retriever picks the tables, their DDL goes
into the prompt, an LLM writes the SQL. A scripted fake LLM stands in for a real one here;
swap in any LangChain chat model or LLM."""

from langchain_core.documents import Document
from langchain_core.language_models.fake import FakeListLLM
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import PromptTemplate
from langchain_core.runnables import RunnableLambda, RunnablePassthrough

import tabret
from tabret.integrations.langchain import TabretRetriever

index = tabret.TableIndex.build(tabret.demo_catalog(), "hashing", progress=False)
retriever = TabretRetriever(retriever=tabret.DenseRetriever(index), k=3)


def schema(docs: list[Document]) -> str:
    return "\n\n".join(d.page_content for d in docs)


prompt = PromptTemplate.from_template(
    "Given these tables:\n\n{schema}\n\nWrite one SQLite query for: {question}\nSQL:"
)
llm = FakeListLLM(responses=["SELECT COUNT(*) FROM Customer WHERE SignupDate >= '2023-01-01'"])
chain = (
    {"schema": retriever | RunnableLambda(schema), "question": RunnablePassthrough()}
    | prompt
    | llm
    | StrOutputParser()
)

question = "How many customers signed up in 2023?"
for doc in retriever.invoke(question):
    print(f"{doc.metadata['score']:.3f}  {doc.id}")
print(chain.invoke(question))
