"""What every stage does first: read the configuration, make the project's folders, hold the project's lock (one
command per project at a time, lapbias/stage.py), and log each summary line to the terminal and logs/lapbias.log."""

from __future__ import annotations

import datetime as dt
import os
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator

from .. import config as config_module
from ..errors import LapbiasError
from ..io import Layout, write_error
from ..signals.batch import Confirm, Declined, always
from ..stage import project_lock

Echo = Callable[[str], None]


@dataclass
class Log:
    """Print a summary line (`echo`) and append it, time-stamped, to logs/lapbias.log."""

    layout: Layout
    echo: Echo = print

    def __call__(self, message: str) -> None:
        self.echo(message)
        stamp = dt.datetime.now().isoformat(timespec="seconds")
        path = self.layout.logs / "lapbias.log"
        try:
            with open(path, "a", encoding="utf-8") as handle:
                for line in message.splitlines():
                    handle.write(f"{stamp} {line}\n")
        except OSError as err:
            raise write_error(err, path, "append to the log") from None

    def warning(self, message: str) -> None:
        self(f"warning: {message}")


@contextmanager
def opened(config: Any, command: str, load: Callable = config_module.load,
           echo: Echo = print) -> Iterator[tuple[Any, Layout, Log]]:
    """(the loaded configuration, its Layout, its Log) with the folders made and the project lock held for the
    block. `config` is a path to a TOML file (read with `load`: a run configuration by default; the audits pass
    their own loader, calibrate's returns (run configuration, [calibrate] settings), whose first item names the
    root) or an already loaded configuration."""
    loaded = load(config) if isinstance(config, (str, Path)) else config
    first = loaded[0] if isinstance(loaded, tuple) else loaded
    if isinstance(config, (str, Path)):
        _read_from_here(Path(config), first)
    layout = Layout(Path(first.root))
    try:
        layout.make_dirs()
    except OSError as err:
        raise write_error(err, first.root, "make the project folders under root =") from None
    with project_lock(layout.logs, command):
        yield loaded, layout, Log(layout, echo)


def _read_from_here(config_path: Path, loaded: Any) -> None:
    """root and [data] path are read from the working directory, not from the config file's folder: a config run from
    another folder (`lapbias report study/c.toml`) whose relative data path exists only beside the config would make
    an empty project here (data/, logs/, results/) and report a missing file. Refused, before any folder is made."""
    data = str(getattr(getattr(loaded, "data", None), "path", "") or "")
    folder = config_path.resolve().parent
    if not data or Path(data).is_absolute() or folder == Path.cwd().resolve():
        return
    if not Path(data).exists() and (folder / data).exists():
        raise LapbiasError(f"root = {str(loaded.root)!r} and [data] path = {data!r} are read from the working "
                           f"directory {Path.cwd()}, not from the config's folder {folder}, where {data} is: run "
                           f"lapbias from {folder} (cd {os.path.relpath(folder)}), or write absolute paths in "
                           f"{config_path.name}")


def confirmation(yes: bool, confirm: Confirm | None = None,
                 how: str = "rerun with --yes (in Python: yes=True) to go ahead") -> Confirm:
    """Protocol Step 0's confirmation of a query batch: the caller's own (the CLI's interactive question), else
    given up front (`yes`), else declined before the model is loaded (ConfirmationDeclined saying `how`)."""
    if confirm is not None:
        return confirm
    return always if yes else Declined(how)


@contextmanager
def backend_for(config, echo: Echo = print) -> Iterator[Any]:
    """The configured backend, loaded only when a query is not cached (llm.LazyBackend), closed after the block."""
    from ..llm import LazyBackend

    backend = LazyBackend(config.model, on_load=lambda model: echo(f"loading model {model.model_id} "
                                                                    f"({model.backend}) ..."))
    try:
        yield backend
    finally:
        backend.close()
