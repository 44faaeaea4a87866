"""`carta ask` / `carta search`: a question of blanks or marks alone is a usage error, before
any model or store is opened."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from service.cli.main import app


@pytest.mark.parametrize("command", ["ask", "search"])
def test_a_question_without_words_is_a_usage_error(command: str) -> None:
    result = CliRunner().invoke(app, [command, " ?! "])
    assert result.exit_code == 2
    assert "no letter or digit" in result.output
