"""A compiled kernel calling another through a run-time address, with numba's own calling convention.

The caller's code then neither links nor re-optimizes the callee's (numba links every callee's LLVM module into its
caller's), so the two compile independently, in two processes at once (solver/warmup.py); the call itself is the
same machine call as a direct one to a function LLVM does not inline."""
from __future__ import annotations

from numba.core import cgutils, config, types
from numba.extending import intrinsic


@intrinsic
def _call_status_at(typingctx, addr, args):
    """`f(*args)` in compiled code for the compiled function f at `addr` (from `status_address`), returning its
    int64 status; an exception raised in f propagates as from a direct call."""
    if not isinstance(addr, types.Integer) or not isinstance(args, types.BaseTuple):
        return None
    argtypes = tuple(args.types)

    def codegen(context, builder, signature, llargs):
        fnty = context.call_conv.get_function_type(types.int64, argtypes)
        fn = builder.inttoptr(llargs[0], fnty.as_pointer())
        vals = cgutils.unpack_tuple(builder, llargs[1], len(argtypes))
        status, res = context.call_conv.call_function(builder, fn, types.int64, argtypes, vals)
        with cgutils.if_unlikely(builder, status.is_error):
            context.call_conv.return_status_propagate(builder, status)
        return res
    return types.int64(addr, args), codegen


def _call_python(f, args):
    return f(*args)


call_status_at = _call_python if config.DISABLE_JIT else _call_status_at   # NUMBA_DISABLE_JIT=1: plain Python
_ADDRESSES: dict = {}


def status_address(disp, argtypes: tuple) -> int:
    """The address of dispatcher disp's code for these numba argument types (loaded from the cache or compiled);
    its return type must be int64, as `call_status_at` calls it. With NUMBA_DISABLE_JIT=1: the Python function."""
    if config.DISABLE_JIT:
        return disp
    key = (disp, tuple(argtypes))
    if key not in _ADDRESSES:
        disp.compile(tuple(argtypes))
        cres = disp.overloads[tuple(argtypes)]
        if cres.signature.return_type != types.int64:
            raise TypeError(f"{disp.py_func.__name__}{cres.signature}: call_status_at needs an int64 return")
        _ADDRESSES[key] = cres.library.get_pointer_to_function(cres.fndesc.llvm_func_name)
    return _ADDRESSES[key]
