"""Channel "clip" (visual profile): the question's CLIP text vector against the CLIP
vectors of pages, images and maps."""

from __future__ import annotations

from index.collections import CLIP_VECTOR
from index.types import Filter, Hit
from service.query.channels.base import EncodedQuery
from service.query.channels.visual import VisualProfileChannel


class ClipChannel(VisualProfileChannel):
    """CLIP text-to-image neighbours."""

    selector = "clip"
    name = "clip"

    def run(self, q: EncodedQuery, flt: Filter) -> list[Hit]:
        vector = self.visual.clip.embed_texts([q.query.text])[0].tolist()
        return self.store.search(self.visual.collection.name, CLIP_VECTOR, vector, flt, q.page_limit)
