"""Pure, stateless encoders: dense text, BM25 sparse, late-interaction page vectors, LLM client."""
