"""Sub-commands of the ``perfcast`` command line, one module each.

Every module defines ``add_parser(subparsers)`` registering its arguments and
``run(args) -> int`` doing the work through the Python API.
"""
