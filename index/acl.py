"""Who may see a document: the ACL rule, written once.

A document's ACL is a list of group names; an empty list means the whole tenant. In the
engine every point carries ``acl`` tokens: the document's groups, or ``[PUBLIC_ACL]`` when
it has none. A caller holds tokens too: ``PUBLIC_ACL`` plus its groups, or ``None`` (an
admin: every document of the tenant). A document is visible when the two share a token.

The engine filter (service/query/filters.py), the API's document checks
(service/auth.py) and graph citations (service/query/channels/graph.py) all use this
module, so the three can never disagree.
"""

from __future__ import annotations

from collections.abc import Sequence

ACL_FIELD = "acl"  # the payload field holding a point's ACL tokens
PUBLIC_ACL = "_public"  # the token of documents without groups


def caller_tokens(groups: Sequence[str], *, admin: bool = False) -> list[str] | None:
    """The ACL tokens of a caller in `groups`; None for an admin (no ACL condition)."""
    return None if admin else [PUBLIC_ACL, *groups]


def document_tokens(doc_acl: Sequence[str]) -> list[str]:
    """The ACL tokens stored on a document's points: its groups, or the public token."""
    return list(doc_acl) or [PUBLIC_ACL]


def is_visible(doc_acl: Sequence[str], tokens: Sequence[str] | None) -> bool:
    """Whether a document with groups `doc_acl` is visible to a caller holding `tokens`
    (None: every document). The same test the engine filter applies to point payloads."""
    return tokens is None or bool(set(document_tokens(doc_acl)) & set(tokens))
