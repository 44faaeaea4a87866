"""The retrieval channels, registered in one list.

To add a channel: write one file here with a BaseChannel subclass (service/query/channels/
base.py) and add its class to CHANNEL_TYPES. Its `selector` joins CHANNELS, the names a
query (and the API's `channels` field, checked by a test) can select.

The order of CHANNEL_TYPES is the order of the fused lists (RRF ties keep it). The graph
channel (graph.py) answers relational questions directly and is not fused.
"""

from __future__ import annotations

from service.query.channels.base import BaseChannel, ChannelContext, EncodedQuery
from service.query.channels.bm25 import Bm25Channel
from service.query.channels.clip import ClipChannel
from service.query.channels.communities import GlobalChannel
from service.query.channels.dense import DenseChannel
from service.query.channels.entities import EntitiesChannel
from service.query.channels.geo_prior import GeoPriorChannel
from service.query.channels.maps import MapsChannel
from service.query.channels.pages import PagesChannel
from service.query.channels.visual import VisualChannel

CHANNEL_TYPES: tuple[type[BaseChannel], ...] = (
    DenseChannel,
    Bm25Channel,
    PagesChannel,
    VisualChannel,
    ClipChannel,
    GeoPriorChannel,
    MapsChannel,
    EntitiesChannel,
    GlobalChannel,
)
# the names a query selects channels by ("dense", "bm25", "pages", "visual", "clip")
CHANNELS: frozenset[str] = frozenset(t.selector for t in CHANNEL_TYPES if t.selector is not None)


def build_channels(ctx: ChannelContext) -> list[BaseChannel]:
    """Every registered channel that can run with what `ctx` holds, in fusion order."""
    return [channel for kind in CHANNEL_TYPES for channel in kind.build(ctx)]


__all__ = ["CHANNELS", "CHANNEL_TYPES", "BaseChannel", "ChannelContext", "EncodedQuery", "build_channels"]
