"""The budgeted, cached LLM loop the document graph's two LLM passes share: entity extraction
chunk by chunk (docgraph/llm_extract.py) and community reports (docgraph/llm_summaries.py).

One job, written once: a reply already cached costs no call; no call is made past the budget
or after a transport error (the endpoint is down: the rest of the pass stays offline without
waiting on it again); a failed call or an unusable reply is counted with its first line, and
the caller keeps its offline result for that item. Every reply is asked through a strict JSON
schema and validated again here (endpoints honour the schema to different degrees).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from models.errors import LLMError
from models.llm_client import LLMClient, json_schema_format, unfenced

M = TypeVar("M", bound=BaseModel)


def strict_format(name: str, schema: type[BaseModel]) -> dict:
    """`schema` as a strict json_schema response_format (every key required, no extras)."""
    return json_schema_format(name, schema.model_json_schema())


@dataclass(frozen=True)
class Sent:
    """One call's validated reply (as JSON text, what the cache keeps) and its token counts."""

    reply: str
    prompt_tokens: int
    completion_tokens: int


def ask_json(
    client: LLMClient, messages: list[dict[str, Any]], max_tokens: int, name: str, schema: type[M]
) -> tuple[M, Sent]:
    """The model's reply through `schema` (raises LLMError, or ValidationError when it is not
    JSON of that shape), and the same as `Sent`."""
    reply = client.chat(messages, max_tokens, strict_format(name, schema))
    parsed = schema.model_validate_json(unfenced(reply.text))
    sent = Sent(parsed.model_dump_json(), reply.usage.prompt_tokens or 0, reply.usage.completion_tokens or 0)
    return parsed, sent


@dataclass
class CallStats:
    """One pass: what it cost and what fell back to offline."""

    sent: int = 0  # LLM calls
    cached: int = 0  # cache hits (no call)
    over_budget: int = 0  # items left offline by the budget
    failed: int = 0  # calls or replies that failed, and items left after the endpoint went down
    prompt_tokens: int = 0
    completion_tokens: int = 0
    errors: list[str] = field(default_factory=list)

    def first_error(self) -> str:
        return self.errors[0] if self.errors else "endpoint unreachable"


class BudgetedCalls:
    """The loop's state across one pass: its stats, and whether the endpoint still answers."""

    def __init__(self, stats: CallStats) -> None:
        self.stats = stats
        self.reachable = True  # False after a transport error: no more calls this pass

    def reply(
        self,
        cached: str | None,
        in_budget: bool,
        ask: Callable[[], Sent],
        keep: Callable[[str], None],
    ) -> str | None:
        """The item's reply: `cached` when there is one, else a new one from `ask` (kept with
        `keep`) when the budget allows and the endpoint answers, else None (offline)."""
        stats = self.stats
        if cached is not None:
            stats.cached += 1
            return cached
        if not self.reachable or not in_budget:
            stats.over_budget += self.reachable
            stats.failed += not self.reachable
            return None
        stats.sent += 1
        try:
            sent = ask()
        except (LLMError, ValidationError, ValueError) as exc:
            stats.failed += 1
            self.reachable = not isinstance(exc, LLMError)
            message = exc.message if isinstance(exc, LLMError) else str(exc).splitlines()[0]
            stats.errors.append(message[:200])
            return None
        stats.prompt_tokens += sent.prompt_tokens
        stats.completion_tokens += sent.completion_tokens
        keep(sent.reply)
        return sent.reply
