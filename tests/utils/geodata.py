"""Geodata questions for graph tests: the analytic result of a question the rules must
read as a plan (tests/graph/test_analytics.py and test_plan_classes.py share it)."""

from __future__ import annotations

from graph.analytics import AnalyticResult
from graph.channel import GraphChannel

TENANT = "t"


def ask(channel: GraphChannel, question: str, tenant: str = TENANT) -> AnalyticResult:
    """The result of `question`, failing the test when it is not analytical."""
    result = channel.analyze(question, tenant)
    assert result is not None, f"not analytical: {question}"
    return result
