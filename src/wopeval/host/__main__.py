"""``python -m wopeval.host [OPTIONS]``: the same as ``wopeval serve [OPTIONS]``."""

from __future__ import annotations

import typer

from wopeval.cli.serve_cmd import register

app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)
register(app)

if __name__ == "__main__":
    app()
