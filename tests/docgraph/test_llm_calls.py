"""The budgeted, cached LLM loop both docgraph LLM passes use, with scripted calls (no server)."""

from __future__ import annotations

from collections.abc import Callable

from docgraph.llm_calls import BudgetedCalls, CallStats, Sent
from models.errors import LLMUnreachable


def asker(replies: list[Sent | Exception], asked: list[int]) -> Callable[[], Sent]:
    def ask() -> Sent:
        asked.append(1)
        out = replies.pop(0)
        if isinstance(out, Exception):
            raise out
        return out

    return ask


def test_cached_replies_cost_no_call_and_new_ones_are_kept() -> None:
    calls, asked, kept = BudgetedCalls(CallStats()), [], []
    ask = asker([Sent("new", 10, 3)], asked)
    assert calls.reply("old", True, ask, kept.append) == "old"
    assert calls.reply(None, True, ask, kept.append) == "new"
    s = calls.stats
    assert (s.cached, s.sent, s.prompt_tokens, s.completion_tokens, len(asked)) == (1, 1, 10, 3, 1)
    assert kept == ["new"]


def test_over_budget_makes_no_call() -> None:
    calls, asked, kept = BudgetedCalls(CallStats()), [], []
    assert calls.reply(None, False, asker([Sent("x", 1, 1)], asked), kept.append) is None
    assert (calls.stats.over_budget, calls.stats.failed, asked, kept) == (1, 0, [], [])


def test_a_bad_reply_is_counted_and_the_next_item_still_asks() -> None:
    calls, asked, kept = BudgetedCalls(CallStats()), [], []
    ask = asker([ValueError("not json\nmore"), Sent("ok", 1, 1)], asked)
    assert calls.reply(None, True, ask, kept.append) is None
    assert calls.reply(None, True, ask, kept.append) == "ok"
    assert (calls.stats.failed, calls.stats.errors, kept) == (1, ["not json"], ["ok"])


def test_a_transport_error_stops_the_calls_of_the_pass() -> None:
    calls, asked, kept = BudgetedCalls(CallStats()), [], []
    ask = asker([LLMUnreachable("down"), Sent("never", 1, 1)], asked)
    assert calls.reply(None, True, ask, kept.append) is None
    assert calls.reply(None, True, ask, kept.append) is None  # not asked: counted as failed
    assert calls.reply("cached", True, ask, kept.append) == "cached"  # the cache still serves
    s = calls.stats
    assert (s.sent, s.failed, s.over_budget, s.cached, len(asked)) == (1, 2, 0, 1, 1)
    assert s.first_error() == "down" and CallStats().first_error() == "endpoint unreachable"
