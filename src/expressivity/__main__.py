"""``python -m expressivity …``: the same command line as the ``expressivity`` script."""

from .cli import main

main()
