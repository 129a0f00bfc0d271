"""Shared helpers of the campaign tests: compiling small C programs, calling the CLI."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def compile_c(directory: Path, name: str, source: str, compiler: str = "gcc") -> Path:
    """Compile ``source`` into ``directory/name`` (debug info, no optimisation) and return it."""
    directory.mkdir(parents=True, exist_ok=True)
    source_path = directory / f"{name}.c"
    source_path.write_text(source)
    binary = directory / name
    subprocess.run(
        [compiler, "-O0", "-g", "-o", str(binary), str(source_path)],
        check=True,
        capture_output=True,
    )
    return binary


def cli_commands() -> tuple[str, ...]:
    """The CLI's sub-commands whose modules exist on this branch (``run`` among them)."""
    from perfcast import cli

    return tuple(
        name for name in cli.COMMANDS if importlib.util.find_spec(f"perfcast.commands.{name}")
    )


def run_cli(argv: list[str]) -> int:
    """Call ``perfcast`` in this process and return its exit status."""
    from perfcast import cli

    saved = cli.COMMANDS
    cli.COMMANDS = cli_commands()
    try:
        return cli.main(argv)
    finally:
        cli.COMMANDS = saved


def cli_subprocess_argv(argv: list[str]) -> list[str]:
    """Command line starting ``perfcast`` as a separate Python process."""
    code = (
        "import sys; from perfcast import cli; "
        f"cli.COMMANDS = {cli_commands()!r}; sys.exit(cli.main(sys.argv[1:]))"
    )
    return [sys.executable, "-c", code, *argv]


RECORDING_PROGRAM = r"""
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* Writes two records per run; fails for n == FAIL_AT; sleeps SLEEP_US microseconds. */
int main(int argc, char **argv) {
  long n = atol(argv[1]);
  const char *out = getenv("PERFCAST_OUTPUT");
  if (getenv("SLEEP_US")) usleep(atol(getenv("SLEEP_US")));
  if (getenv("FAIL_AT") && n == atol(getenv("FAIL_AT"))) {
    fprintf(stderr, "cannot handle n=%ld\n", n);
    return 1;
  }
  if (getenv("HANG_AT") && n == atol(getenv("HANG_AT"))) sleep(60);
  if (out) {
    FILE *f = fopen(out, "a");
    fprintf(f, "{\"kernel\": \"main->solve\", \"metric\": \"visits\", \"value\": %ld}\n", 2 * n);
    if (getenv("BAD_RECORD")) fprintf(f, "{\"kernel\": \"main\", \"metric\": \"time\"}\n");
    else fprintf(f, "{\"kernel\": \"main->solve\", \"metric\": \"time\", \"value\": %g}\n",
                 n * 0.5);
    fclose(f);
  }
  return 0;
}
"""


def processes_with(fragment: str) -> list[int]:
    """Ids of live processes whose command line contains ``fragment`` (read from /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if fragment in command and state != "Z":
            found.append(int(entry.name))
    return found
