"""`carta eval`: score question sets against a fresh in-process Carta or a running server,
through the same CartaClient the other commands use."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Annotated

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from service.carta import Carta
from service.cli.client import CartaClient, ClientError, RequestFailed
from service.cli.common import ServerOpt, console, fail, iter_files
from service.cli.http_client import HttpClient
from service.cli.local_client import LocalClient
from service.evaluation import runner
from service.evaluation.questions import Question, load_peer_qa, load_questions
from service.settings import Settings

SERVER_TIMEOUT_S = 120  # per request to --server (the other commands wait up to 600 s)


def evaluate(
    questions: Annotated[
        list[Path], typer.Option("--questions", "-q", help="Question set (.yaml or .jsonl).")
    ] = [],  # noqa: B006
    peer_qa: Annotated[Path | None, typer.Option(help="Peer Q&A JSON ([{question, answer}]) ...")] = None,
    peer_pdf: Annotated[Path | None, typer.Option(help="... and the PDF it is about.")] = None,
    ingest_paths: Annotated[
        list[Path], typer.Option("--ingest", help="Index these files/folders first.")
    ] = [],  # noqa: B006
    map_paths: Annotated[
        list[Path],
        typer.Option("--ingest-maps", help="Index these map files with their georeference sidecars."),
    ] = [],  # noqa: B006
    dataset_specs: Annotated[
        list[str],
        typer.Option(
            "--dataset", help="Load a POI dataset first: FILE or FILE=CATEGORY (files without one)."
        ),
    ] = [],  # noqa: B006
    data_dir: Annotated[Path | None, typer.Option(help="Data dir (default: a fresh temporary one).")] = None,
    limit: Annotated[int | None, typer.Option(min=1, help="At most this many questions per set.")] = None,
    out_dir: Annotated[Path, typer.Option("--out", help="Where results.json and results.md go.")] = Path(
        "eval"
    ),
    server: ServerOpt = None,
) -> None:
    """Score question sets: page retrieval (vs BM25-only and dense-only), answers, refusals, injections."""
    from ingest.upload import IngestRequest  # the document loaders (PyMuPDF): this command only

    sets: dict[str, list[Question]] = {path.stem: load_questions(path)[:limit] for path in questions}
    if peer_qa and peer_pdf:
        sets[f"peer-{peer_pdf.stem}"] = load_peer_qa(peer_qa, peer_pdf)[:limit]
    if not sets:
        fail("give at least one --questions file or --peer-qa/--peer-pdf", code=2)
    total = sum(len(v) for v in sets.values())
    with tempfile.TemporaryDirectory(prefix="carta-eval-") as tmp:
        carta = None
        if server:
            client: CartaClient = HttpClient(server, api_key=Settings().api_key, timeout=SERVER_TIMEOUT_S)
        else:
            carta = Carta(Settings(data_dir=data_dir or Path(tmp)))
            client = LocalClient(carta, carta.settings.default_tenant)
        try:
            files = list(iter_files(ingest_paths)) if ingest_paths else []
            maps = list(iter_files(map_paths)) if map_paths else []
            datasets = [_dataset_spec(spec) for spec in dataset_specs]
            with Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                console=console,
            ) as bar:
                if (files or maps or datasets) and carta is None:
                    fail("--ingest/--ingest-maps/--dataset work in-process only; upload first", code=2)
                tenant = carta.settings.default_tenant if carta else ""
                if files:
                    task = bar.add_task("indexing", total=len(files))
                    for i, path in enumerate(files, start=1):
                        # the bytes alone, as `make eval` has always indexed them (LocalClient.ingest
                        # would also read georeference sidecars next to the file)
                        carta.ingest(IngestRequest(path.read_bytes(), path.name, tenant))
                        bar.update(task, completed=i)
                for path in maps:  # with the .pgw/.prj/.aux.xml next to them, as an upload of the set
                    assert carta is not None
                    carta.ingest(IngestRequest(path.read_bytes(), path.name, tenant, source_path=path))
                for path, category in datasets:
                    try:
                        client.add_dataset(path.read_bytes(), path.name, category=category)
                    except RequestFailed as exc:  # its questions are then skipped, the run goes on
                        console.print(f"[yellow]dataset {path.name} not loaded: {exc.message}[/yellow]")
                task = bar.add_task("questions", total=total)
                results = runner.run(sets, client, progress=lambda n: bar.update(task, completed=n))
        except ClientError as exc:
            fail(exc.message, exc.exit_code)
        finally:
            client.close()
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


def _dataset_spec(spec: str) -> tuple[Path, str | None]:
    """`FILE` or `FILE=CATEGORY` as (path, category); a missing file is a CLI error."""
    name, _, category = spec.partition("=")
    path = Path(name)
    if not path.is_file():
        fail(f"no such dataset file: {path}", code=2)
    return path, category or None
