"""The `carta` command line: ingest, search, ask, list, delete, reindex, serve.

Commands work on the local data dir by default. The embedded store allows one process
at a time, so while `carta serve` runs, send commands to it with `--server URL`.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

import httpx
import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from index.vector_store import StoreError
from ingest.errors import IngestError
from ingest.upload import IngestRequest
from models.errors import ModelUnavailable
from models.llm_client import LLMError
from service.api import schemas
from service.api.errors import error_code
from service.carta import Carta, DocumentNotFound
from service.cli.admin import audit, keys_app
from service.cli.poi import poi_app
from service.query.geo_filter import GeoFilterError, GeoSpec
from service.settings import Settings

app = typer.Typer(
    help="Carta: multimodal, geospatial document RAG.", no_args_is_help=True, pretty_exceptions_enable=False
)
console = Console(stderr=True)
app.add_typer(poi_app, name="poi")
out = Console()
SUFFIXES = {
    ".pdf", ".png", ".jpg", ".jpeg", ".tif", ".tiff", ".webp", ".geojson", ".kml", ".kmz", ".osm", ".pbf"
}  # fmt: skip

ServerOpt = Annotated[
    str | None,
    typer.Option("--server", envvar="CARTA_SERVER", help="Send the command to a running Carta at this URL."),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON (stable shape, same as the HTTP API).")]
NearOpt = Annotated[
    str | None, typer.Option("--near", help='Point "lat,lon" or a place name ("Recife"); with --radius.')
]
RadiusOpt = Annotated[
    float | None, typer.Option("--radius", help="Radius in metres (with --near or --place).")
]
BboxOpt = Annotated[str | None, typer.Option("--bbox", help='"min_lon,min_lat,max_lon,max_lat".')]
PlaceOpt = Annotated[str | None, typer.Option("--place", help="A place name from the gazetteers.")]
H3Opt = Annotated[str | None, typer.Option("--h3", help="Comma-separated H3 cells (any resolution).")]
PriorOpt = Annotated[
    bool, typer.Option("--geo-prior/--no-geo-prior", help="Boost pages near a place the question names.")
]
TopKOpt = Annotated[int, typer.Option("--top-k", "-k", min=1, max=50, help="Pages to return.")]


def fail(message: str, code: int = 1) -> None:
    console.print(f"[red]error:[/red] {message}")
    raise typer.Exit(code)


def open_carta() -> Carta:
    try:
        carta = Carta(Settings())
    except (StoreError, ModelUnavailable) as exc:
        fail(str(exc))
        raise  # unreachable, keeps type checkers happy
    if message := carta.reindex_needed():
        console.print(f"[yellow]warning:[/yellow] {message}")
    return carta


def auth_headers() -> dict[str, str]:
    """The API key the CLI sends with --server (CARTA_API_KEY), if any."""
    key = Settings().api_key
    return {"Authorization": f"Bearer {key}"} if key else {}


def server_call(server: str, method: str, path: str, **kwargs: Any) -> Any:
    headers = auth_headers()
    try:
        response = httpx.request(method, server.rstrip("/") + path, timeout=600, headers=headers, **kwargs)
    except httpx.HTTPError as exc:
        fail(f"cannot reach the Carta server at {server} ({exc.__class__.__name__})")
    if response.status_code >= 400:
        try:
            fail(response.json()["error"]["message"])
        except (ValueError, KeyError):
            fail(f"HTTP {response.status_code}: {response.text[:200]}")
    return response.json()


def geo_body(
    near: str | None, radius: float | None, bbox: str | None, place: str | None, h3: str | None
) -> dict[str, Any] | None:
    """The `geo` field of a search/ask request from the CLI's geo options."""
    body: dict[str, Any] = {}
    if near and not _looks_like_point(near):  # --near "Recife": a place name
        place, near = near, None
    try:
        if near:
            lat, lon = (float(v) for v in near.split(","))
            body.update(lat=lat, lon=lon, radius_m=radius)
        if bbox:
            body["bbox"] = [float(v) for v in bbox.split(",")]
    except ValueError:
        fail('--near takes "lat,lon" and --bbox "min_lon,min_lat,max_lon,max_lat" (numbers)', code=2)
    if place:
        body["place"] = place
        if radius and not near:
            body["radius_m"] = radius
    if h3:
        body["h3"] = [c.strip() for c in h3.split(",") if c.strip()]
    if near and radius is None:
        fail("--near needs --radius (metres)", code=2)
    return body or None


def _looks_like_point(text: str) -> bool:
    parts = text.split(",")
    try:
        return len(parts) == 2 and all(float(p) is not None for p in parts)
    except ValueError:
        return False


def run_query(
    kind: str, text: str, top_k: int, geo: dict[str, Any] | None, prior: bool, server: str | None
) -> dict[str, Any]:
    """A search or ask, on a server or in-process; the body is the HTTP API's JSON either way."""
    if server:
        field = "query" if kind == "search" else "question"
        request = {field: text, "top_k": top_k, "geo": geo, "geo_prior": prior}
        return server_call(server, "POST", f"/v1/{kind}", json=request)
    carta = open_carta()
    try:
        spec = GeoSpec(**geo) if geo else None
        q = carta.query(text, carta.settings.default_tenant, top_k=top_k, geo=spec, geo_prior=prior)
        if kind == "search":
            return schemas.search_response(carta.search(q)).model_dump()
        return schemas.ask_response(carta.ask(q)).model_dump()
    except GeoFilterError as exc:
        fail(str(exc), code=2)
        raise
    except LLMError as exc:
        fail(exc.message)
        raise
    finally:
        carta.close()


def stream_ask(
    question: str, top_k: int, geo: dict[str, Any] | None, prior: bool, server: str | None
) -> dict[str, Any]:
    """Print the answer's tokens as they come; return the final response (HTTP API shape)."""
    from service.api.streaming import error_body, event_data, parse_sse

    def events() -> Iterator[tuple[str, Any]]:
        if server:
            request = {"question": question, "top_k": top_k, "geo": geo, "geo_prior": prior, "stream": True}
            try:
                url = server.rstrip("/") + "/v1/ask"
                with httpx.stream("POST", url, json=request, timeout=600, headers=auth_headers()) as response:
                    if response.status_code >= 400:
                        response.read()
                        fail(response.json().get("error", {}).get("message", response.text[:200]))
                    yield from parse_sse(response.iter_lines())
            except httpx.HTTPError as exc:
                fail(f"cannot reach the Carta server at {server} ({exc.__class__.__name__})")
            return
        carta = open_carta()
        try:
            spec = GeoSpec(**geo) if geo else None
            q = carta.query(question, carta.settings.default_tenant, top_k=top_k, geo=spec, geo_prior=prior)
            try:
                for event in carta.ask_events(q):
                    yield event.kind, event_data(event)
            except Exception as exc:  # noqa: BLE001 - shown as the server would send it
                yield "error", error_body(exc)[1]
        except GeoFilterError as exc:
            fail(str(exc), code=2)
        finally:
            carta.close()

    final: dict[str, Any] = {}
    for kind, data in events():
        if kind == "token":
            sys.stdout.write(data["text"])
            sys.stdout.flush()
        elif kind == "error":
            sys.stdout.write("\n")
            fail(data["error"]["message"])
        elif kind == "done":
            final = data
    sys.stdout.write("\n")
    return final


def print_citations(body: dict[str, Any]) -> None:
    for c in body["citations"]:
        out.print(f"  [{c['doc_id']} p.{c['page_no']}] {c['title']}", markup=False, highlight=False)
    for c in body.get("invalid_citations") or []:
        console.print(
            f"  [yellow]not in the evidence:[/yellow] [{c['doc_id']} p.{c['page_no']}] ({c['reason']})",
            markup=True,
            highlight=False,
        )
def server_ingest(server: str, files: list, data: dict, on_progress: Any) -> dict[str, Any]:
    """Upload to a server and follow the job until the document is ready (or failed)."""
    body = server_call(server, "POST", "/v1/documents", files=files, data=data)
    job = body["job"]
    while job["status"] not in ("ready", "failed"):
        on_progress(job)
        time.sleep(0.5)
        job = server_call(server, "GET", f"/v1/jobs/{job['id']}")
    if job["status"] == "failed":
        raise IngestError(job["error"] or "the ingestion job failed")
    document = body["document"] or server_call(server, "GET", f"/v1/documents/{job['document_id']}")
    return {"document": document, "created": body["created"], "warnings": job["warnings"], "job": job}


SIDECAR_SUFFIXES = (".pgw", ".jgw", ".tfw", ".wld", ".pngw", ".jpgw", ".tifw", ".prj")


def sidecar_files(path: Path) -> list[Path]:
    """Georeference files next to a map image: world file, .prj, GDAL .aux.xml."""
    found = [path.with_suffix(s) for s in SIDECAR_SUFFIXES] + [path.with_name(path.name + ".aux.xml")]
    return [p for p in found if p.is_file()]


def iter_files(paths: list[Path]) -> Iterator[Path]:
    for path in paths:
        if path.is_dir():
            yield from sorted(p for p in path.rglob("*") if p.suffix.lower() in SUFFIXES and p.is_file())
        elif path.exists():
            yield path
        else:
            fail(f"no such file: {path}", code=2)


@app.command()
def ingest(
    paths: Annotated[
        list[Path], typer.Argument(help="Files or folders (PDF, images, GeoJSON, KML/KMZ, OSM).")
    ],
    title: Annotated[str | None, typer.Option(help="Title (single file only).")] = None,
    server: ServerOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Index documents; re-ingesting the same content is a no-op."""
    files = list(iter_files(paths))
    if not files:
        fail("no supported files found", code=2)
    if title and len(files) > 1:
        fail("--title applies to a single file", code=2)
    results: list[dict] = []
    failures = 0
    carta = None if server else open_carta()
    try:
        with Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=console,
            disable=as_json,
        ) as bar:
            for path in files:
                task = bar.add_task(path.name, total=None)
                try:
                    if server:
                        data = {"title": title} if title else {}
                        files = [("file", (path.name, path.read_bytes()))] + [
                            ("sidecars", (side.name, side.read_bytes())) for side in sidecar_files(path)
                        ]
                        body = server_ingest(
                            server, files, data, lambda j, t=task: bar.update(
                                t, completed=j["pages_done"], total=j["pages_total"] or None
                            )
                        )
                    else:
                        assert carta is not None
                        result = carta.ingest(
                            IngestRequest(
                                path.read_bytes(),
                                path.name,
                                carta.settings.default_tenant,
                                title=title,
                                source_path=path,
                            ),
                            lambda p, t=task: bar.update(t, completed=p.done, total=p.total),
                        )
                        body = schemas.IngestedOut(
                            document=schemas.document_out(result.document),
                            created=result.created,
                            warnings=result.warnings,
                        ).model_dump()
                    results.append({"file": str(path), **body})
                    bar.update(
                        task,
                        description=f"{path.name} [green]{body['document']['id']}"
                        f"{'' if body['created'] else ' (already indexed)'}",
                    )
                except IngestError as exc:
                    failures += 1
                    error = {"code": error_code(exc), "message": str(exc)}
                    results.append({"file": str(path), "error": error})
                    bar.update(task, description=f"{path.name} [red]{exc}")
    finally:
        if carta:
            carta.close()
    if as_json:
        out.print_json(json.dumps(results, ensure_ascii=False))
    if failures:
        raise typer.Exit(1)


@app.command()
def search(
    query: Annotated[str, typer.Argument(help="Question or keywords (pt or en).")],
    top_k: TopKOpt = 5,
    near: NearOpt = None,
    radius: RadiusOpt = None,
    bbox: BboxOpt = None,
    place: PlaceOpt = None,
    h3: H3Opt = None,
    geo_prior: PriorOpt = True,
    server: ServerOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Find the pages that best match a query, optionally only near a place."""
    body = run_query("search", query, top_k, geo_body(near, radius, bbox, place, h3), geo_prior, server)
    if as_json:
        out.print_json(json.dumps(body, ensure_ascii=False))
        return
    table = Table("#", "doc", "page", "score", "channels", "excerpt")
    for i, hit in enumerate(body["results"], start=1):
        channels = " ".join(f"{k}#{v['rank']}" for k, v in hit["channels"].items())
        table.add_row(
            str(i),
            hit["doc_id"],
            str(hit["page_no"]),
            f"{hit['score']:.4f}",
            channels,
            hit["excerpt"][:80].replace("\n", " "),
        )
    out.print(table)


@app.command()
def ask(
    question: Annotated[str, typer.Argument(help="A question (pt or en).")],
    top_k: TopKOpt = 5,
    near: NearOpt = None,
    radius: RadiusOpt = None,
    bbox: BboxOpt = None,
    place: PlaceOpt = None,
    h3: H3Opt = None,
    geo_prior: PriorOpt = True,
    server: ServerOpt = None,
    as_json: JsonOpt = False,
    map_png: Annotated[
        Path | None, typer.Option("--map", help="Write the relational evidence map (PNG).")
    ] = None,
    stream: Annotated[
        bool | None,
        typer.Option("--stream/--no-stream", help="Print the answer as it is written (default on a TTY)."),
    ] = None,
) -> None:
    """Answer a question from the indexed documents (and POI datasets), with citations."""
    geo = geo_body(near, radius, bbox, place, h3)
    if stream is None:
        stream = sys.stdout.isatty() and not as_json and map_png is None
    if stream and not as_json:
        print_citations(stream_ask(question, top_k, geo, geo_prior, server))
        return
    body = run_query("ask", question, top_k, geo, geo_prior, server)
    if as_json:
        out.print_json(json.dumps(body, ensure_ascii=False))
        return
    out.print(body["answer"], markup=False, highlight=False)
    print_citations(body)
    if body.get("graph") and map_png:
        from graph.mapping import render_png

        map_png.write_bytes(render_png(body["graph"]["geojson"], question))
        console.print(f"map: {map_png}")


@app.command("list")
def list_documents(server: ServerOpt = None, as_json: JsonOpt = False) -> None:
    """List indexed documents."""
    if server:
        docs = server_call(server, "GET", "/v1/documents")
    else:
        carta = open_carta()
        try:
            docs = [
                schemas.document_out(d).model_dump()
                for d in carta.registry.list(carta.settings.default_tenant)
            ]
        finally:
            carta.close()
    if as_json:
        out.print_json(json.dumps(docs, ensure_ascii=False))
        return
    table = Table("id", "title", "kind", "pages", "status")
    for d in docs:
        table.add_row(d["id"], d["title"], d["kind"], str(d["pages"]), d["status"])
    out.print(table)


@app.command()
def delete(
    doc_id: Annotated[str, typer.Argument(help="Document id (see `carta list`).")], server: ServerOpt = None
) -> None:
    """Delete a document with all its vectors, page images and registry rows."""
    if server:
        server_call(server, "DELETE", f"/v1/documents/{doc_id}")
    else:
        carta = open_carta()
        try:
            carta.delete(carta.settings.default_tenant, doc_id)
        except DocumentNotFound as exc:
            fail(str(exc.args[0]))
        finally:
            carta.close()
    console.print(f"deleted {doc_id}")


@app.command()
def reindex() -> None:
    """Bring documents indexed under another profile (lite/visual) up to the configured one,
    from the stored page images; documents indexed with another text model are listed."""
    from service.reindex import reindex as run_reindex

    carta = open_carta()
    try:
        report = run_reindex(carta, lambda doc, done, total: console.print(f"{doc}: {done}/{total} pages"))
    finally:
        carta.close()
    console.print(f"re-indexed {len(report.reindexed)} document(s) for profile {carta.profile}")
    if report.needs_upload:
        fail(f"{len(report.needs_upload)} document(s) use another text model; upload them again: "
             + ", ".join(report.needs_upload))


@app.command("eval")
def evaluate(
    questions: Annotated[
        list[Path], typer.Option("--questions", "-q", help="Question set (.yaml or .jsonl).")
    ] = [],  # noqa: B006
    peer_qa: Annotated[Path | None, typer.Option(help="Peer Q&A JSON ([{question, answer}]) ...")] = None,
    peer_pdf: Annotated[Path | None, typer.Option(help="... and the PDF it is about.")] = None,
    ingest_paths: Annotated[
        list[Path], typer.Option("--ingest", help="Index these files/folders first.")
    ] = [],  # noqa: B006
    data_dir: Annotated[Path | None, typer.Option(help="Data dir (default: a fresh temporary one).")] = None,
    limit: Annotated[int | None, typer.Option(min=1, help="At most this many questions per set.")] = None,
    out_dir: Annotated[Path, typer.Option("--out", help="Where results.json and results.md go.")] = Path(
        "eval"
    ),
    server: ServerOpt = None,
) -> None:
    """Score question sets: page retrieval (vs BM25-only and dense-only), answers, refusals, injections."""
    import tempfile

    from service.evaluation import runner
    from service.evaluation.questions import load_peer_qa, load_questions
    from service.evaluation.targets import HttpTarget, InProcessTarget

    sets = {path.stem: load_questions(path)[:limit] for path in questions}
    if peer_qa and peer_pdf:
        sets[f"peer-{peer_pdf.stem}"] = load_peer_qa(peer_qa, peer_pdf)[:limit]
    if not sets:
        fail("give at least one --questions file or --peer-qa/--peer-pdf", code=2)
    total = sum(len(v) for v in sets.values())
    with tempfile.TemporaryDirectory(prefix="carta-eval-") as tmp:
        carta = None
        if server:
            target: Any = HttpTarget(server, api_key=Settings().api_key)
        else:
            carta = Carta(Settings(data_dir=data_dir or Path(tmp)))
            target = InProcessTarget(carta, carta.settings.default_tenant)
        try:
            files = list(iter_files(ingest_paths)) if ingest_paths else []
            with Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                console=console,
            ) as bar:
                if files:
                    if carta is None:
                        fail("--ingest works in-process only; upload to the server first", code=2)
                    task = bar.add_task("indexing", total=len(files))
                    for i, path in enumerate(files, start=1):
                        carta.ingest(
                            IngestRequest(path.read_bytes(), path.name, carta.settings.default_tenant)
                        )
                        bar.update(task, completed=i)
                task = bar.add_task("questions", total=total)
                results = runner.run(sets, target, progress=lambda n: bar.update(task, completed=n))
        finally:
            if carta:
                carta.close()
    summary = runner.summarize(results)
    out_dir.mkdir(parents=True, exist_ok=True)
    report = runner.markdown(summary)
    (out_dir / "results.json").write_text(
        json.dumps(
            {"summary": summary, "results": [r.__dict__ for r in results]}, ensure_ascii=False, indent=1
        )
    )
    (out_dir / "results.md").write_text(report)
    typer.echo(report)
    console.print(f"written {out_dir / 'results.json'} and {out_dir / 'results.md'}")


@app.command()
def geocode(
    text: Annotated[str, typer.Argument(help="Any text: coordinates and place names are looked up.")],
    country: Annotated[str | None, typer.Option(help="ISO2 country hint, e.g. BR.")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Show the geo tags Carta would give a text (for debugging gazetteers and coordinates).

    "used" says whether a tag passes CARTA_GEO_MIN_CONFIDENCE."""
    from ingest.geotagging import GeoTagger
    from service.carta import load_gazetteer

    settings = Settings()
    try:
        tagger = GeoTagger(load_gazetteer(settings), min_confidence=0.0)
    except FileNotFoundError as exc:
        fail(str(exc))
    tags = tagger.tags(text, country.upper() if country else None)
    rows = [t.to_payload() for t in tags]
    if as_json:
        out.print_json(json.dumps(rows, ensure_ascii=False))
        return
    table = Table("label", "source", "kind", "lat", "lon", "confidence", "country", "used")
    for t in tags:
        used = "yes" if t.confidence >= settings.geo_min_confidence else "no"
        table.add_row(
            t.label,
            t.source,
            t.kind,
            f"{t.lat:.5f}",
            f"{t.lon:.5f}",
            f"{t.confidence:.2f}",
            t.country or "",
            used,
        )
    out.print(table)


@app.command()
def serve(
    host: Annotated[str, typer.Option(help="Interface to bind.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port.")] = 8000,
    ingest_samples: Annotated[
        Path | None,
        typer.Option(help="Folder of sample documents to index on first start (when no document exists)."),
    ] = None,
) -> None:
    """Run the HTTP API (OpenAPI docs at /docs)."""
    import uvicorn

    from service.api.app import create_app
    from service.observability import configure_logging

    log_json = Settings().log_json
    configure_logging(log_json if log_json is not None else not sys.stderr.isatty())
    carta = open_carta()
    try:
        tenant = carta.settings.default_tenant
        if ingest_samples and not carta.registry.list(tenant):
            for path in iter_files([ingest_samples]):
                console.print(f"indexing sample {path.name} ...")
                try:
                    carta.ingest(IngestRequest(path.read_bytes(), path.name, tenant))
                except IngestError as exc:
                    console.print(f"[yellow]skipped {path.name}: {exc}")
        console.print(f"Carta on http://{host}:{port} (docs: /docs, data: {carta.settings.data_dir})")
        uvicorn.run(create_app(carta=carta), host=host, port=port, log_level="info", log_config=None)
    finally:
        carta.close()


app.add_typer(keys_app, name="keys")
app.command("audit")(audit)


def main() -> None:  # pragma: no cover - console entry
    app()


if __name__ == "__main__":  # pragma: no cover
    sys.exit(app())
