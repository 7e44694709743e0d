"""``python -m c4lab`` runs the ``c4lab`` command."""

from c4lab.cli import run

if __name__ == "__main__":  # pragma: no cover
    run()
