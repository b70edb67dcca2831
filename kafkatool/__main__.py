"""Allow ``python -m kafkatool``."""

from kafkatool.cli import main

main()
