"""``python -m c4lab`` runs the ``c4lab`` command."""

from c4lab.cli import main

if __name__ == "__main__":  # pragma: no cover
    main()
