"""The README and docs/ are what a newcomer reads first: every relative link must reach a
file of the repository (and a heading, when it names one), and the settings table must
list every field of service/settings.py, so the docs cannot silently go stale."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from service.settings import Settings

REPO = Path(__file__).resolve().parent.parent
DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"```.*?```", re.S)


def github_slug(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    body = FENCE.sub("", path.read_text(encoding="utf-8"))
    return {github_slug(m.group(1)) for m in re.finditer(r"^#{1,6} (.+)$", body, re.M)}


def relative_links(path: Path) -> list[str]:
    body = FENCE.sub("", path.read_text(encoding="utf-8"))
    return [t for t in LINK.findall(body) if not re.match(r"^[a-z]+:", t)]


def test_github_slug_matches_githubs_rule() -> None:
    assert github_slug("Grounded answers with an LLM (`service/answer/llm.py`)") == (
        "grounded-answers-with-an-llm-serviceanswerllmpy"
    )
    assert github_slug("Keys, tenants, jobs") == "keys-tenants-jobs"


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(REPO)))
def test_relative_links_point_at_existing_files_and_headings(doc: Path) -> None:
    broken = []
    for target in relative_links(doc):
        file_part, _, anchor = target.partition("#")
        dest = (doc.parent / file_part).resolve() if file_part else doc
        if not dest.exists():
            broken.append(f"{target}: no file {dest}")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            broken.append(f"{target}: no heading #{anchor} in {dest.name}")
    assert not broken, f"{doc.name}: " + "; ".join(broken)


def test_readme_links_the_reference_docs_and_screenshots() -> None:
    links = relative_links(REPO / "README.md")
    for name in ("docs/architecture.md", "docs/configuration.md", "docs/production.md"):
        assert any(link.startswith(name) for link in links), name
    assert any(link.startswith("docs/screenshots/") and link.endswith(".png") for link in links)


def test_configuration_lists_every_setting() -> None:
    text = (REPO / "docs" / "configuration.md").read_text(encoding="utf-8")
    missing = [name for name in Settings.model_fields if f"`CARTA_{name.upper()}`" not in text]
    assert not missing, f"docs/configuration.md lacks {missing}"
