"""Facts about C library functions that both the source and the binary analyses need."""

from __future__ import annotations

NORETURN_CALLS = frozenset(
    {
        "exit", "_exit", "_Exit", "quick_exit", "abort", "__assert_fail", "__stack_chk_fail",
        "__fortify_fail", "__chk_fail", "longjmp", "siglongjmp", "__longjmp_chk", "err", "errx",
        "verr", "verrx", "pthread_exit", "__cxa_throw", "__cxa_rethrow", "_Unwind_Resume",
        "MPI_Abort",
    }
)  # fmt: skip
"""Library functions that never return (MPI_Abort ends every process of the job); DWARF's
``DW_AT_noreturn`` and the sources' declarations name more."""
