"""``python -m runiq.cli``: the ``runiq`` command."""

from runiq.cli.main import app

app(prog_name="runiq")
