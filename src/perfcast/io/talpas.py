"""The Talpas format: JSON Lines with ``;`` between the fields.

Each non-blank line looks like
``{"parameters":{"x":20};"metric":"time";"callpath":"compute";"value":82.0}``. Like Extra-P
4.2.5, the reader turns every ``;`` of a line into ``,`` before parsing it (so a ``;`` inside a
name becomes ``,``), requires ``callpath`` and ``metric`` in every record and takes the parameters
and their order from the first record; records at the same point, kernel and metric are
repetitions in file order.

Where perfcast differs, on purpose: records whose parameters differ from the first one's, unknown
keys and non-finite values are errors naming the line; kernels need not be measured at every
point (Extra-P rejects such files, e.g. its test file ``talpas_10_neg.txt``).
"""

from __future__ import annotations

from pathlib import Path

from perfcast.core.experiment import Experiment
from perfcast.io._records import first_content_line, talpas_object
from perfcast.io.jsonlines import read_records

NAME = "talpas"


def sniff(path: Path, head: str) -> bool:
    """True when the first line is a Talpas record with ``parameters``."""
    record = talpas_object(first_content_line(head))
    return record is not None and "parameters" in record


def read(path: Path) -> Experiment:
    """Read a Talpas file.

    Raises
    ------
    InputError
        For a malformed or inconsistent record, naming its line.
    """
    return read_records(Path(path), talpas_object, "parameters", ("callpath",), (None, None))
