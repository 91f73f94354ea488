"""The engine: numba kernels, run files, campaigns (no Qt). Its kernels' cache is chosen per version of its sources;
calls between its kernels are compiled once for constant arguments."""
from solver import kernel_cache as _kernel_cache

_kernel_cache.use()           # before numba is imported (it reads NUMBA_CACHE_DIR then)

from solver import kernel_calls as _kernel_calls   # noqa: E402, F401  (kernels compiled once for constant arguments)
