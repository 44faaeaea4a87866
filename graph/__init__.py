"""The geospatial graph: POI datasets, H3 zones, NEAR/CONNECTS/MENTIONS relations and the
relational question answering built on them (issue 6)."""
