"""The LLM options of ``tabret query`` and ``tabret eval``: a local model server started for the
command (``--llm local``), a server the user runs (``--llm-url``), and, for ``eval``, the
recorded answers or the offline rewriters; with a response cache and a recording."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from tabret.llms import Api, OpenAICompatibleLLM
    from tabret.recordings import RecordingLLM
    from tabret.rewriting import LLMLike

Source = Literal["none", "recorded", "offline", "local", "url", "replay"]


@dataclass(frozen=True)
class LLMChoice:
    """Where a command's LLM answers come from."""

    source: Source
    url: str | None = None
    model: str | None = None
    api: Api = "auto"
    threads: int | None = None
    cache: str | None = None
    record: str | None = None
    replay: str | None = None

    @property
    def live(self) -> bool:
        """A model answers (local or at --llm-url), not recordings or offline rewriters."""
        return self.source in ("local", "url")

    @property
    def answers(self) -> bool:
        """Prompts get answers: a live model or a replayed recording of one."""
        return self.live or self.source == "replay"


#: What --llm local, replay and --llm-url are, in every command's help.
LIVE_HELP = (
    "local: the bundled Gemma 3 270M (or --llm-model FILE.gguf) in a llama.cpp server started "
    "for this command (tabret[local-llm]); replay: a recording of a live model (--llm-replay); "
    "or a server you run, --llm-url"
)


def add_arguments(
    p: argparse.ArgumentParser, title: str, *, sources: list[str], default: str, help: str
) -> None:
    g = p.add_argument_group(title)
    g.add_argument("--llm", choices=sources, default=default, help=help)
    g.add_argument(
        "--llm-url",
        help="a running OpenAI-compatible server, e.g. http://localhost:8000/v1 (vLLM, Ollama, "
        "llama.cpp, OpenAI); the key comes from $TABRET_LLM_API_KEY or $OPENAI_API_KEY",
    )
    g.add_argument(
        "--llm-model",
        help="the model: its name at --llm-url (default: gpt-4o-mini); a GGUF file for --llm "
        "local (default: the bundled Gemma 3 270M); the recorded model for --llm replay",
    )
    g.add_argument(
        "--llm-api",
        default="auto",
        choices=["auto", "chat", "completions"],
        help="protocol at --llm-url: auto (default) asks the server: llama.cpp's /props, else "
        "chat unless the server refuses it; --llm local chooses by the model's chat template",
    )
    g.add_argument(
        "--llm-threads",
        type=int,
        metavar="N",
        help="--llm local: threads of the model server (default: the cores this process may use)",
    )
    g.add_argument(
        "--llm-cache",
        metavar="FILE",
        help="answers kept in a SQLite response cache: a rerun asks the model nothing it asked",
    )
    g.add_argument(
        "--llm-record",
        metavar="FILE.jsonl[.gz]",
        help="save every prompt and answer of the live model into a recording (kept entries "
        "of an existing one); `--llm replay --llm-replay FILE` answers from it without a model",
    )
    g.add_argument(
        "--llm-replay", metavar="FILE.jsonl[.gz]", help="the recording --llm replay answers from"
    )


def add_optional_arguments(p: argparse.ArgumentParser, title: str, without: str) -> None:
    """The LLM options of a command whose LLM step is optional (``--llm none`` by default:
    ``without`` says what happens then)."""
    add_arguments(
        p,
        title,
        sources=["none", "local", "replay"],
        default="none",
        help=f"none (default): {without}; {LIVE_HELP}",
    )


def choice(args: argparse.Namespace) -> LLMChoice:
    source: Source = args.llm
    if args.llm_url:
        if source not in ("none", "recorded"):
            raise ValueError(f"--llm-url connects to a server: it does not go with --llm {source}")
        source = "url"
    if source == "replay" and not args.llm_replay:
        raise ValueError("--llm replay answers from a recording: give --llm-replay FILE")
    if args.llm_replay and source != "replay":
        raise ValueError("--llm-replay goes with --llm replay")
    if args.llm_record and source not in ("local", "url"):
        raise ValueError("--llm-record records a live model: give --llm local or --llm-url")
    if args.llm_threads is not None and source != "local":
        raise ValueError("--llm-threads sets the threads of --llm local")
    return LLMChoice(
        source=source,
        url=args.llm_url,
        model=args.llm_model,
        api=args.llm_api,
        threads=args.llm_threads,
        cache=args.llm_cache,
        record=args.llm_record,
        replay=args.llm_replay,
    )


@dataclass
class OpenLLM:
    """A command's LLM while it runs: ``llm`` is what methods call (cache and recording
    included); ``client`` the live server's client (its ``usage``), if any."""

    llm: LLMLike
    client: OpenAICompatibleLLM | None
    recording: RecordingLLM | None

    def usage_line(self, questions: int, wall: float) -> str:
        """Requests, tokens and seconds of the live model per question, and the command's
        wall time per question (``wall`` seconds in all) without the LLM's."""
        if self.client is None:
            return ""
        u, n = self.client.usage, max(questions, 1)
        return (
            f"LLM {self.client.model} ({self.client.api}): {u.requests} requests "
            f"({u.requests / n:.2f} per question), {u.prompt_tokens / n:.0f} prompt + "
            f"{u.completion_tokens / n:.1f} completion tokens and {u.seconds / n:.2f} s of "
            f"requests per question; tabret {(wall - u.seconds) / n:.2f} s per question "
            f"(index, embeddings and retrieval; {questions} questions)"
        )


@contextlib.contextmanager
def open_llm(c: LLMChoice, *, quiet: bool) -> Iterator[OpenLLM | None]:
    """The LLM ``c`` names, for the ``with`` block: a local server is started and stopped, a
    recording saved at the end (also when the block fails: what the model answered is kept)."""
    if not c.answers:
        yield None
        return
    with contextlib.ExitStack() as stack:
        client = None
        llm: LLMLike
        if c.source == "replay":
            from tabret.recordings import RecordedLLM

            assert c.replay is not None
            llm = RecordedLLM(c.replay, c.model)
        elif c.source == "local":
            client = _local(c, stack, quiet)
            llm = client
        else:
            client = _remote(c, quiet)
            llm = client
        if c.cache:
            from tabret.llms import CachedLLM

            llm = CachedLLM(llm, c.cache)
        recording = None
        if c.record:
            from tabret.recordings import RecordingLLM

            recording = RecordingLLM(llm, c.record)
            llm = recording
        try:
            yield OpenLLM(llm, client, recording)
        finally:
            if recording is not None:
                total = recording.save()
                if not quiet:
                    print(
                        f"recorded {len(recording)} answers into {recording.path} ({total} in all)",
                        file=sys.stderr,
                    )


def _local(c: LLMChoice, stack: contextlib.ExitStack, quiet: bool) -> OpenAICompatibleLLM:
    from tabret.local_llm import LocalLLMServer

    server = LocalLLMServer(c.model, threads=c.threads)
    if not quiet:
        print(f"starting a local LLM server for {server.model_name} ...", file=sys.stderr)
    stack.enter_context(server)
    client = server.llm(api=None if c.api == "auto" else c.api, progress=not quiet)
    if not quiet:
        print(f"{server} answers with {client.api}", file=sys.stderr)
    return client


def _remote(c: LLMChoice, quiet: bool) -> OpenAICompatibleLLM:
    from tabret.llms import OpenAICompatibleLLM, PromptSampling

    assert c.url is not None
    # Credentials in the URL (http://user:KEY@host/v1) are the ones meant: no key from the
    # environment then (the client refuses both at once).
    in_url = "@" in urllib.parse.urlsplit(c.url).netloc
    key = os.environ.get("TABRET_LLM_API_KEY") or os.environ.get("OPENAI_API_KEY")
    return OpenAICompatibleLLM(
        c.url,
        c.model or "gpt-4o-mini",
        None if in_url else key,
        api=c.api,
        sampling=PromptSampling(),
        progress=not quiet,
    )
