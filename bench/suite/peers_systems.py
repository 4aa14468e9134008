"""The peers' systems (bench/suite/peers.py runs the formulas of peers_formulas.py on
them): one class per array module, numpy, jax.numpy, cupy and torch, with what differs
between them (transfers, roll, copy, the functions' names, compilation, synchronisation).
Each imports its library when constructed and raises Unavailable when it cannot run here
(no library, no GPU).
"""

import contextlib
import importlib.metadata
import os

import numpy as np

GPU_SYSTEMS = ("jax", "cupy", "torch")
ALL_SYSTEMS = GPU_SYSTEMS + ("numpy",)


class Unavailable(Exception):
    pass


class NumpySystem:
    name = "numpy"
    compiles = False
    device = "CPU (numpy)"

    def __init__(self):
        self.versions = {}

    def to_device(self, a):
        return a

    def to_host(self, a):
        return np.asarray(a)

    def compile(self, fn, fresh=True):
        return fn

    def sync(self, arrays):
        pass

    def roll(self, a, shift, axis):
        return np.roll(a, shift, axis)

    def copy(self, a):
        return a.copy()

    def function(self, name):
        return getattr(np, name)

    def release(self):
        pass


class JaxSystem:
    name = "jax"
    compiles = True

    def __init__(self):
        # Allocate on demand: cupy and torch share the GPU in this process.
        os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
        try:
            import jax
            import jax.numpy as jnp
        except Exception as e:
            raise Unavailable(f"import jax: {type(e).__name__}: {e}") from e
        jax.config.update("jax_enable_x64", True)
        # jax quietly falls back to the CPU without a CUDA jaxlib: that is not the peer.
        if jax.default_backend() != "gpu":
            raise Unavailable(f"jax has no GPU backend (default backend "
                              f"{jax.default_backend()})")
        import jaxlib
        self.jax, self.jnp = jax, jnp
        self.dev = jax.devices()[0]
        self.device = self.dev.device_kind
        self.versions = {"jax": jax.__version__, "jaxlib": jaxlib.__version__}

    def to_device(self, a):
        return self.jax.device_put(a, self.dev)

    def to_host(self, a):
        return np.asarray(a)

    def compile(self, fn, fresh=True):
        return self.jax.jit(fn)

    def sync(self, arrays):
        for a in arrays:
            a.block_until_ready()

    def roll(self, a, shift, axis):
        return self.jnp.roll(a, shift, axis)

    def copy(self, a):
        return self.jnp.copy(a)

    def function(self, name):
        return getattr(self.jnp, name)

    def release(self):
        pass


class CupySystem:
    name = "cupy"
    compiles = False

    def __init__(self):
        try:
            import cupy
            count = cupy.cuda.runtime.getDeviceCount()
        except Exception as e:
            raise Unavailable(f"cupy: {type(e).__name__}: {e}") from e
        if count < 1:
            raise Unavailable("cupy: no CUDA device")
        self.cupy = cupy
        name = cupy.cuda.runtime.getDeviceProperties(0)["name"]
        self.device = name.decode() if isinstance(name, bytes) else str(name)
        self.versions = {"cupy": cupy.__version__}

    def to_device(self, a):
        return self.cupy.asarray(a)

    def to_host(self, a):
        return self.cupy.asnumpy(a)

    def compile(self, fn, fresh=True):
        return fn

    def sync(self, arrays):
        self.cupy.cuda.Device().synchronize()

    def roll(self, a, shift, axis):
        return self.cupy.roll(a, shift, axis)

    def copy(self, a):
        return a.copy()

    def function(self, name):
        return getattr(self.cupy, name)

    def release(self):
        self.cupy.get_default_memory_pool().free_all_blocks()


class TorchSystem:
    name = "torch"
    compiles = True

    def __init__(self):
        try:
            import torch
        except Exception as e:
            raise Unavailable(f"import torch: {type(e).__name__}: {e}") from e
        if not torch.cuda.is_available():
            raise Unavailable("torch: CUDA is not available")
        self.torch = torch
        self.device = torch.cuda.get_device_name(0)
        self.versions = {"torch": torch.__version__}
        try:
            import triton
            self.versions["triton"] = triton.__version__
        except Exception:
            pass

    def to_device(self, a):
        return self.torch.from_numpy(a).to("cuda")

    def to_host(self, a):
        return a.cpu().numpy()

    def compile(self, fn, fresh=True):
        # A fresh Dynamo cache per function, as in a fresh process: the closures of one
        # builder share a code object, and a second compile of it with other shapes would
        # make Dynamo switch to dynamic shapes.  (fresh=False: a further piece of the same
        # measurement, of other code, whose compiled companions must stay.)  fullgraph: a
        # graph break would run part of the function eagerly, a silent fallback; make it an
        # error instead.
        if fresh:
            self.torch._dynamo.reset()
        return self.torch.compile(fn, fullgraph=True)

    def sync(self, arrays):
        self.torch.cuda.synchronize()

    @contextlib.contextmanager
    def timed_range(self):
        self.torch.cuda.nvtx.range_push("timed")
        try:
            yield
        finally:
            self.torch.cuda.nvtx.range_pop()

    def roll(self, a, shift, axis):
        return self.torch.roll(a, shifts=shift, dims=axis)

    def copy(self, a):
        return a.clone()

    def function(self, name):
        """The numpy-named function in torch; a number beside a tensor in a binary
        function becomes a tensor of its shape (torch.fmin and the like take tensors)."""
        torch = self.torch
        binary = {"fmin": torch.fmin, "fmax": torch.fmax, "arctan2": torch.atan2,
                  "fmod": torch.fmod, "power": torch.pow}
        if name not in binary:
            return getattr(torch, name)
        op = binary[name]

        def apply(a, b):
            if not isinstance(a, torch.Tensor):
                a = torch.full_like(b, a)
            if not isinstance(b, torch.Tensor):
                b = torch.full_like(a, b)
            return op(a, b)
        return apply

    def release(self):
        self.torch.cuda.empty_cache()


SYSTEM_CLASSES = {"jax": JaxSystem, "cupy": CupySystem, "torch": TorchSystem,
                  "numpy": NumpySystem}


def installed_version(*distributions):
    """A package's version from its metadata, without importing it."""
    for dist in distributions:
        try:
            return importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            continue
    return None


def library_versions():
    cupy = installed_version("cupy")
    if cupy is None:
        for dist in importlib.metadata.distributions():
            name = dist.metadata["Name"] or ""
            if name.lower().startswith("cupy"):
                cupy = dist.version
                break
    return {"jax": installed_version("jax"), "jaxlib": installed_version("jaxlib"),
            "cupy": cupy, "torch": installed_version("torch"),
            "triton": installed_version("triton", "pytorch-triton")}


def make_system(name):
    try:
        return SYSTEM_CLASSES[name](), ""
    except Unavailable as e:
        return None, str(e)
    except Exception as e:  # a library that imports but fails to start
        return None, f"{type(e).__name__}: {e}"
