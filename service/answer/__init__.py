"""From evidence to answer: extractive, LLM and graph answerers, prompting, citations."""
