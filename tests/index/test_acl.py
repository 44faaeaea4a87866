"""The ACL rule (index/acl.py): the one place the engine filter, the API's document
checks and graph citations take it from."""

from __future__ import annotations

from index.acl import PUBLIC_ACL, caller_tokens, document_tokens, is_visible


def test_caller_tokens_hold_the_public_token_and_the_groups() -> None:
    assert caller_tokens([]) == [PUBLIC_ACL]
    assert caller_tokens(["finance", "hr"]) == [PUBLIC_ACL, "finance", "hr"]
    assert caller_tokens(["finance"], admin=True) is None


def test_documents_without_groups_carry_the_public_token() -> None:
    assert document_tokens([]) == [PUBLIC_ACL]
    assert document_tokens(["finance"]) == ["finance"]


def test_a_document_is_visible_when_it_shares_a_token_with_the_caller() -> None:
    plain, finance = caller_tokens([]), caller_tokens(["finance"])
    assert is_visible([], plain) and is_visible([], finance)
    assert not is_visible(["finance"], plain)
    assert is_visible(["finance", "hr"], finance) and not is_visible(["hr"], finance)
    assert is_visible(["hr"], None)  # an admin sees every document of the tenant


def test_the_rule_matches_what_the_engine_filter_matches() -> None:
    """The engine keeps a point when its `acl` payload (document_tokens) shares a token
    with the caller's; is_visible must say the same for every combination."""
    groups = [[], ["finance"], ["hr"], ["finance", "hr"], [PUBLIC_ACL]]
    for doc_acl in groups:
        for caller in groups:
            tokens = caller_tokens(caller)
            engine_keeps = any(t in tokens for t in document_tokens(doc_acl))
            assert is_visible(doc_acl, tokens) == engine_keeps, (doc_acl, caller)
