"""The API's error shape, shared by every route module: {"error": {"code", "message"}}."""

from __future__ import annotations

from fastapi.responses import JSONResponse

from service.api import schemas

ERROR_RESPONSES = {"model": schemas.ErrorResponse}  # for the OpenAPI `responses` of each route


class ApiError(Exception):
    """Raised by a route: answered as `error_response(status, code, message)`."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


def error_response(status: int, code: str, message: str) -> JSONResponse:
    return JSONResponse({"error": {"code": code, "message": message}}, status_code=status)
