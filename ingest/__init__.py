"""The write path: load documents, extract and OCR text, chunk, encode and index them."""
