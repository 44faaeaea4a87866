"""/v1/jobs: an ingestion job's state, and its progress as server-sent events."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

from fastapi import APIRouter, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import StreamingResponse

from service.api import schemas
from service.api.deps import Caller, ServicesDep
from service.api.errors import ERROR_RESPONSES as _ERRORS
from service.auth import Principal
from service.errors import JobNotFound
from service.jobs import TERMINAL, Job, JobRunner

router = APIRouter(tags=["jobs"])


def visible_job(jobs: JobRunner, who: Principal, job_id: str) -> Job:
    """The job, if the caller may follow it: its uploader, an admin of its tenant, or a key
    of its tenant that may see its document (service/jobs.py)."""
    job = jobs.visible_job(who, job_id)
    if job is None:
        raise JobNotFound(f"no job {job_id!r}")
    return job


@router.get("/v1/jobs/{job_id}", response_model=schemas.JobOut, responses={404: _ERRORS})
def get_job(services: ServicesDep, who: Caller, job_id: str) -> Any:
    """An ingestion job: status, stage, pages done of total, the document when ready."""
    return visible_job(services.jobs, who, job_id).out()


@router.get(
    "/v1/jobs/{job_id}/events",
    response_class=StreamingResponse,
    responses={404: _ERRORS, 200: {"content": {"text/event-stream": {}}}},
)
async def job_events(request: Request, services: ServicesDep, who: Caller, job_id: str) -> StreamingResponse:
    """Server-sent events: `progress` (JobOut) on every change, then `done` (JobOut)."""
    store = services.job_store
    visible_job(services.jobs, who, job_id)

    async def events() -> AsyncIterator[str]:
        last: dict[str, Any] | None = None
        while True:
            job = await run_in_threadpool(store.get, job_id)
            if job is None:  # erased meanwhile
                return
            out = job.out()
            if job.status in TERMINAL:
                yield f"event: done\ndata: {json.dumps(out)}\n\n"
                return
            if out != last:
                yield f"event: progress\ndata: {json.dumps(out)}\n\n"
                last = out
            if await request.is_disconnected():
                return
            await asyncio.sleep(0.25)

    return StreamingResponse(events(), media_type="text/event-stream", headers={"Cache-Control": "no-store"})
