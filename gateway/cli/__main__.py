"""`python -m gateway.cli …`: the same command line as `blast-radius` (serve starts its workers
so).
"""

from gateway.cli.commands import main

main()
