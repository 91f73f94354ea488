from solver import kernel_calls as _kernel_calls   # noqa: F401  (kernels compiled once for constant arguments)
