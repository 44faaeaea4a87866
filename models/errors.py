"""What models/ raises: errors a user can act on (what is missing, which setting to check).

Exception tree (each class also inherits the built-in in brackets):

    ModelError
    ├── ModelUnavailable [RuntimeError]
    └── LLMError [RuntimeError]
        ├── LLMTimeout
        ├── LLMUnreachable
        ├── LLMStatusError
        └── LLMBadResponse

No HTTP status here: service/api/errors.py maps each class to the API's answer.
"""

from __future__ import annotations


class ModelError(Exception):
    """Base of every error raised by models/."""


class ModelUnavailable(ModelError, RuntimeError):
    """A configured model cannot be loaded (weights missing, package absent)."""


class LLMError(ModelError, RuntimeError):
    """The LLM endpoint failed; the message says what and which setting to check."""

    def __init__(self, message: str, upstream_status: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.upstream_status = upstream_status  # the endpoint's own HTTP status, when it sent one


class LLMTimeout(LLMError):
    """The endpoint did not answer within the timeout (after the SDK's retries)."""


class LLMUnreachable(LLMError):
    """The endpoint cannot be reached (connection refused, DNS, TLS)."""


class LLMStatusError(LLMError):
    """The endpoint answered with an HTTP error status (kept in `upstream_status`)."""


class LLMBadResponse(LLMError):
    """The endpoint's reply is not a usable OpenAI-compatible completion."""
