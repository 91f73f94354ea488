"""The engine: numba kernels, run files, campaigns (no Qt). Its kernels' cache is chosen per version of its sources."""
from solver import kernel_cache as _kernel_cache

_kernel_cache.use()
