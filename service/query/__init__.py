"""The retrieval side: engine filter, channels, fusion."""
