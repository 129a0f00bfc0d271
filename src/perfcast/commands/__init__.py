"""Sub-commands of the ``perfcast`` command line, one module each.

Every module defines ``add_parser(subparsers)`` registering its arguments and
``run(args) -> int`` doing the work through the Python API. The one-line summary
``perfcast --help`` lists for each command is :data:`perfcast.cli.SUMMARIES`, so that
listing the commands imports none of these modules.
"""
