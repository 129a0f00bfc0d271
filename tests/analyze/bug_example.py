"""The bug example: a strong-scaling stencil code with one planted scalability bug.

Measured (synthetically, 2 % log-normal noise, 3 repetitions) at p = 2..64 processes and problem
sizes n = 1e4..8e4, in seconds:

=====================================  ==========================  ==============================
kernel                                 truth                       verdict
=====================================  ==========================  ==============================
``main->compute``                      ``1e-3 n/p``                as expected (strong scaling)
``main->halo_exchange``                ``1.5e-3 (n/p)^(1/2)``     p^(-1/2): worse than 1/p, but
                                                                   3.4 % of the time at the
                                                                   default target: not a bug
``main->MPI_Allreduce``                ``4e-3 log2 p``             a collective: log p expected
``main->gather_on_root``               ``6e-14 p n^2``             **the planted bug**: rank 0
                                                                   inserts every rank's block
                                                                   into a sorted global array
``main->init``                         ``0.05``                    serial but constant
``main->exchange->__memcpy_avx_...``   ``1e-5 n p^(-1/2)``         C library: runtime
``_dl_relocate_object``                ``1e-4 p``                  dynamic linker: runtime
=====================================  ==========================  ==============================

At the default target (p = 8 x 64 = 512, n = 8e4) the planted bug is 36 % of the total and the
halo exchange 3.4 %; along n (``--scale n``: n = 6.4e5, p = 64) the bug is 12.5 %.
"""

from __future__ import annotations

import numpy as np

from perfcast.core.experiment import Experiment
from tests.analyze.synthetic import experiment

P = [2, 4, 8, 16, 32, 64]
N = [1e4, 2e4, 4e4, 8e4]
PLANTED = "main->gather_on_root"
HALO = "main->halo_exchange"
RUNTIME = ("main->exchange->__memcpy_avx_unaligned_erms", "_dl_relocate_object")
TRUTH = {
    "main->compute": lambda p, n: 1e-3 * n / p,
    HALO: lambda p, n: 1.5e-3 * np.sqrt(n / p),
    "main->MPI_Allreduce": lambda p, n: 4e-3 * np.log2(p) + 0 * n,
    PLANTED: lambda p, n: 6e-14 * p * n**2,
    "main->init": lambda p, n: 0.05 + 0 * p * n,
    RUNTIME[0]: lambda p, n: 1e-5 * n / np.sqrt(p),
    RUNTIME[1]: lambda p, n: 1e-4 * p + 0 * n,
}


def bug_experiment(roles: dict[str, str] | None = None, seed: int = 5) -> Experiment:
    """The example over p and n; ``p`` has the role ``processes`` as a campaign would set."""
    return experiment(
        TRUTH,
        {"p": P, "n": N},
        repetitions=3,
        noise=0.02,
        seed=seed,
        roles={"p": "processes"} if roles is None else roles,
    )


def lone_n_experiment(p: float = 64.0, seed: int = 5) -> Experiment:
    """A problem-size sweep of the example at ``p`` processes: ``n`` is the only parameter."""
    sweep = {kernel: (lambda n, f=f: f(p, n)) for kernel, f in TRUTH.items()}
    return experiment(sweep, {"n": N}, repetitions=3, noise=0.02, seed=seed)
