"""`accelopt memory ...`: inspect, search, share and curate the optimization memory."""
from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

PathOpt = Annotated[Path | None, typer.Option("--path", help="Embedded Chroma directory of the store.")]
ServerOpt = Annotated[str | None, typer.Option("--server", help="URL of a `chroma run` server (http://host:port).")]
ConfigOpt = Annotated[Path | None, typer.Option("--config", help="Run config YAML (`memory:` section) or the section.")]
HardwareOpt = Annotated[str | None, typer.Option("--hardware", help="Only this hardware namespace, e.g. trn1.")]
BackendOpt = Annotated[str | None, typer.Option("--backend", help="Only this backend namespace, e.g. nkisim.")]

memory_app = typer.Typer(name="memory", help="Inspect and curate the optimization memory (experience store).",
                         no_args_is_help=True)


def _store(path: Path | None, server: str | None, config: Path | None):
    from accelopt_graph.memory.config import MemoryConfig
    from accelopt_graph.memory.store import open_store

    if path is not None and server is not None:
        raise typer.BadParameter("give either --path or --server, not both")
    raw = MemoryConfig.from_yaml(config).model_dump() if config is not None else {}
    if path is not None:
        raw.update(path=path, server_url=None)
    if server is not None:
        raw.update(server_url=server)
    return open_store(MemoryConfig.model_validate(raw))


def _table(title: str, rows, *, score: bool = False):
    """One row per item; the speedup is green for positive items and red for negative ones."""
    from rich.table import Table

    table = Table(title=title)
    for name in (["score"] if score else []) + ["id", "speedup", "task", "title", "run/iter", "created"]:
        table.add_column(name, overflow="fold", no_wrap=name == "id")
    for item, value in rows:
        cells = [f"{value:.3f}"] if score else []
        color = "green" if item.polarity == "positive" else "red"
        table.add_row(*cells, item.id, f"[{color}]{item.speedup:.3f}x[/{color}]", item.task, item.title,
                      f"{item.provenance.run_id}/{item.provenance.iteration}", item.created_at.strftime("%m-%d %H:%M"))
    return table


@memory_app.command("list")
def list_(path: PathOpt = None, server: ServerOpt = None, config: ConfigOpt = None,
          task: Annotated[str | None, typer.Option(help="Only this task.")] = None,
          polarity: Annotated[str | None, typer.Option(help="positive | negative")] = None,
          run: Annotated[str | None, typer.Option("--run", help="Only this run id.")] = None,
          hardware: HardwareOpt = None, backend: BackendOpt = None,
          limit: Annotated[int, typer.Option(help="Show at most this many (newest first).")] = 50) -> None:
    """List stored experiences as a table, newest first."""
    from rich.console import Console

    if polarity not in (None, "positive", "negative"):
        raise typer.BadParameter(f"--polarity must be positive or negative, got {polarity!r}")
    store = _store(path, server, config)
    items = store.list(task=task, polarity=polarity, run_id=run, hardware=hardware, backend=backend, limit=limit)
    Console().print(_table(f"{len(items)} of {store.count()} experiences", [(i, None) for i in items]))


@memory_app.command()
def show(id: str, path: PathOpt = None, server: ServerOpt = None, config: ConfigOpt = None,
         as_json: Annotated[bool, typer.Option("--json", help="Print the raw item as JSON.")] = False) -> None:
    """Show one experience: what the planner sees, its provenance and both kernels."""
    from rich.console import Console
    from rich.syntax import Syntax

    try:
        item = _store(path, server, config).get(id)
    except KeyError as err:
        raise typer.BadParameter(err.args[0]) from err
    if as_json:
        typer.echo(item.model_dump_json(indent=2))
        return
    console = Console()
    console.rule(f"{item.id} ({item.hardware}/{item.backend})")
    console.print(item.to_planner_text(), markup=False, soft_wrap=True)
    console.print(f"provenance: {item.provenance.model_dump_json()}", markup=False, soft_wrap=True)
    for label, code in (("slow kernel", item.slow_code), ("fast kernel", item.fast_code)):
        console.rule(label)
        console.print(Syntax(code, "python"))


@memory_app.command()
def search(text: str, path: PathOpt = None, server: ServerOpt = None, config: ConfigOpt = None,
           k: Annotated[int, typer.Option("-k", help="How many hits.")] = 10,
           hardware: HardwareOpt = None, backend: BackendOpt = None) -> None:
    """Rank experiences by similarity to TEXT (code, a bottleneck, an idea)."""
    from rich.console import Console

    hits = _store(path, server, config).search(text, k, hardware=hardware, backend=backend)
    Console().print(_table(f"{len(hits)} hits for {text[:40]!r}", hits, score=True))


@memory_app.command()
def stats(path: PathOpt = None, server: ServerOpt = None, config: ConfigOpt = None) -> None:
    """Summarize the store per namespace and task: items, positives, negatives, best speedup, runs."""
    from rich.console import Console
    from rich.table import Table

    groups: dict[tuple[str, str, str], list] = {}
    for item in _store(path, server, config).list():
        groups.setdefault((item.hardware, item.backend, item.task), []).append(item)
    table = Table(title=f"{sum(map(len, groups.values()))} experiences")
    for name in ["hardware", "backend", "task", "items", "positive", "negative", "best speedup", "runs"]:
        table.add_column(name)
    for (hardware, backend, task), items in sorted(groups.items()):
        positives = sum(i.polarity == "positive" for i in items)
        table.add_row(hardware, backend, task or "-", str(len(items)), str(positives), str(len(items) - positives),
                      f"{max(i.speedup for i in items):.3f}x", str(len({i.provenance.run_id for i in items})))
    Console().print(table)


@memory_app.command()
def rm(ids: list[str], path: PathOpt = None, server: ServerOpt = None, config: ConfigOpt = None) -> None:
    """Delete experiences by id (curation: drop a misleading or wrong item)."""
    store = _store(path, server, config)
    removed = store.delete(ids)
    typer.echo(f"deleted {removed} of {len(ids)} experiences")
    if removed < len(ids):
        raise typer.Exit(code=1)


@memory_app.command("export")
def export(file: Path, path: PathOpt = None, server: ServerOpt = None, config: ConfigOpt = None) -> None:
    """Write every experience to FILE as JSON Lines."""
    n = _store(path, server, config).export_jsonl(file)
    typer.echo(f"exported {n} experiences to {file}")


@memory_app.command("import")
def import_(file: Path, path: PathOpt = None, server: ServerOpt = None, config: ConfigOpt = None) -> None:
    """Add the experiences of a JSON Lines FILE (ids kept; items already stored are skipped)."""
    store = _store(path, server, config)
    before = store.count()
    ids = store.import_jsonl(file)
    typer.echo(f"read {len(ids)} experiences from {file}; {store.count() - before} new")


@memory_app.command()
def prune(path: PathOpt = None, server: ServerOpt = None, config: ConfigOpt = None,
          policy: Annotated[str | None, typer.Option(help="fifo | score | random (default: the config's).")] = None,
          max_items: Annotated[int | None, typer.Option(help="Keep at most this many per namespace.")] = None,
          run: Annotated[str | None, typer.Option("--run", help="Only within this run id.")] = None,
          task: Annotated[str | None, typer.Option(help="Only within this task.")] = None,
          dry_run: Annotated[bool, typer.Option("--dry-run", help="Only list what would be evicted.")] = False) -> None:
    """Evict experiences by a capacity policy."""
    if policy not in (None, "fifo", "score", "random", "unlimited"):
        raise typer.BadParameter(f"--policy must be fifo, score, random or unlimited, got {policy!r}")
    store = _store(path, server, config)
    try:
        ids = store.prune(policy=policy, max_items=max_items, run_id=run, task=task, dry_run=dry_run)
    except ValueError as err:
        raise typer.BadParameter(str(err)) from err
    verb = "would evict" if dry_run else "evicted"
    typer.echo(f"{verb} {len(ids)} experiences" + "".join(f"\n  {i}" for i in ids))


def register(app: typer.Typer) -> None:
    """Add this room's commands to the top-level app."""
    app.add_typer(memory_app, name="memory")
