"""Test factories and helpers shared by every test package, one module per concept:
`documents` (PDF, image and world-file bytes), `servers` (loopback HTTP servers), `api`
(uploading through the HTTP API and waiting for its jobs), `scripts` (loading scripts/*.py),
`cli` (the `carta` command run in the test process).

Fixtures built on them live in tests/conftest.py."""
