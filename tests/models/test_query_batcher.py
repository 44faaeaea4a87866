"""Concurrent query encodings share one batch; each caller gets its own result or error."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from models.query_batcher import QueryBatcher
from models.text_encoder import TextEncoder


class GatedEncoder:
    """Upper-cases texts; the first call blocks until released, so others queue behind it."""

    def __init__(self) -> None:
        self.calls: list[list[str]] = []
        self.release = threading.Event()
        self.entered = threading.Event()

    def __call__(self, texts: list[str]) -> list[str]:
        self.calls.append(list(texts))
        if len(self.calls) == 1:
            self.entered.set()
            assert self.release.wait(10)
        if any(t == "boom" for t in texts):
            raise ValueError("cannot encode boom")
        return [t.upper() for t in texts]


def ask_all(batcher: QueryBatcher[str], texts: list[str], out: dict[str, object]) -> list[threading.Thread]:
    """Each text asked from its own thread (started); results or errors land in `out`."""

    def call(text: str) -> None:
        try:
            out[text] = batcher.one(text)
        except ValueError as exc:
            out[text] = exc

    threads = [threading.Thread(target=call, args=(t,)) for t in texts]
    for t in threads:
        t.start()
    return threads


def busy(max_batch: int) -> tuple[GatedEncoder, QueryBatcher[str], threading.Thread]:
    """A batcher whose encoder is inside its first call ("first"), held until released."""
    encoder = GatedEncoder()
    batcher = QueryBatcher(encoder, max_batch=max_batch)
    first = threading.Thread(target=batcher.one, args=("first",))
    first.start()
    assert encoder.entered.wait(10)
    return encoder, batcher, first


def wait_pending(batcher: QueryBatcher[str], n: int) -> None:
    """Until `n` callers wait for the busy encoder (10 s at most)."""
    deadline = time.monotonic() + 10
    while len(batcher._pending) < n:
        assert time.monotonic() < deadline, f"{len(batcher._pending)} callers waiting, not {n}"
        time.sleep(0.01)


def test_an_idle_encoder_encodes_at_once() -> None:
    encoder = GatedEncoder()
    encoder.release.set()
    batcher = QueryBatcher(encoder)
    assert batcher.one("flood") == "FLOOD"
    assert encoder.calls == [["flood"]]


def test_questions_that_arrive_while_busy_go_through_together() -> None:
    encoder, batcher, first = busy(max_batch=4)
    later = [f"q{i}" for i in range(6)]
    out: dict[str, object] = {}
    threads = ask_all(batcher, later, out)
    wait_pending(batcher, len(later))  # all six wait behind the first call
    encoder.release.set()
    for t in [first, *threads]:
        t.join(10)
    assert out == {q: q.upper() for q in later}
    assert encoder.calls[0] == ["first"]
    assert [len(c) for c in encoder.calls[1:]] == [4, 2]  # at most max_batch a call, oldest first
    assert sorted(t for c in encoder.calls[1:] for t in c) == sorted(later)
    assert (batcher.batches, batcher.texts) == (3, 7)


def test_an_error_reaches_every_caller_of_its_batch_and_the_next_batch_still_runs() -> None:
    encoder, batcher, first = busy(max_batch=2)
    out: dict[str, object] = {}
    threads = ask_all(batcher, ["boom"], out)
    wait_pending(batcher, 1)
    threads += ask_all(batcher, ["fine"], out)  # queued right after "boom": the same batch of two
    wait_pending(batcher, 2)
    encoder.release.set()
    for t in [first, *threads]:
        t.join(10)
    assert isinstance(out["boom"], ValueError)
    assert isinstance(out["fine"], ValueError)  # same batch as "boom": both fail, neither hangs
    assert batcher.one("after") == "AFTER"  # the batcher is not stuck after an error


@pytest.fixture(scope="module")
def text_encoder() -> TextEncoder:
    return TextEncoder()


def test_a_batched_question_gets_the_vectors_it_gets_alone(text_encoder: TextEncoder) -> None:
    questions = ["Quais são as coordenadas do Parque da Jaqueira?", "flood risk in Recife", "x"]
    alone = [text_encoder.embed_with_tokens([q])[0] for q in questions]
    together = text_encoder.embed_with_tokens(questions)  # what a batch of concurrent callers runs
    for a, b in zip(alone, together, strict=True):
        assert a.tokens.shape == b.tokens.shape
        np.testing.assert_allclose(a.tokens, b.tokens, atol=1e-5)
        assert float(a.dense @ b.dense) > 0.99999
