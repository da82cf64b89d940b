"""`python -m countbot` is the `countbot` command."""

from countbot.cli import main

main()
