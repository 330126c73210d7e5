"""numpy's BLAS on one thread in a memvault process.

Memory's matrices are small (a query against a few hundred vectors, forty candidates against each
other), and a server runs many of them at once beside the embedding model. OpenBLAS would split each
over every core, and its idle threads spin-wait for the next: on two cores that tripled the CPU a
search's vector stage uses and took the cores the query's embedding needed."""

from __future__ import annotations

import functools

from threadpoolctl import threadpool_limits


@functools.cache
def one_blas_thread() -> None:
    """Limit the BLAS numpy loaded to one thread, once a process (every local composition asks)."""
    import numpy  # noqa: F401  (threadpoolctl limits the libraries loaded so far)

    threadpool_limits(limits=1, user_api="blas")
