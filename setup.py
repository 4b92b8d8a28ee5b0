"""Build the Cython kernels of ``_kernels/`` as the flat modules ``ssvmlinear._kernels.<name>``.

``_kernels/`` is organised by role -- ``core/`` (dataset, structure interface, factor layer, label
store, team, QP, max-flow, C helpers), ``structures/`` (one structure a file), ``losses/``
(surrogates and searches), ``solvers/`` and ``io/`` -- while every module keeps a flat name, so that
``from ssvmlinear._kernels.dataset cimport CSRDataset`` works from any folder. Cython resolves a
``cimport`` by the qualified name, so every ``.pxd`` is mirrored into
``build/pxd/ssvmlinear/_kernels/`` and that folder is on Cython's include path; the C helpers
(``core/*.h``) are on the compiler's. Set ``SSVM_DEBUG=1`` to build with bounds checks and
assertions on (see notes on packaging).

The kernels are translated and compiled in parallel, one job per core (``SSVM_BUILD_JOBS`` sets
another number), with one line per kernel as it is compiled (shown by ``pip install -v``).
"""
import os
import shutil
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = Path(__file__).resolve().parent
KERNELS = HERE / "_kernels"
DEBUG = os.environ.get("SSVM_DEBUG", "0") not in ("", "0")
JOBS = int(os.environ.get("SSVM_BUILD_JOBS", "0")) or os.cpu_count() or 1


class ParallelBuild(build_ext):
    """build_ext compiling the kernels JOBS at a time, a line per kernel."""

    def finalize_options(self):
        super().finalize_options()
        if not self.parallel:
            self.parallel = JOBS

    def build_extension(self, ext):
        print(f"compiling kernel {ext.name.rsplit('.', 1)[-1]}", flush=True)
        super().build_extension(ext)


def mirror_pxd():
    dest = HERE / "build" / "pxd" / "ssvmlinear" / "_kernels"
    dest.mkdir(parents=True, exist_ok=True)
    for pkg in (dest.parent, dest):
        (pkg / "__init__.pxd").touch()
    for pxd in KERNELS.rglob("*.pxd"):     # copied only when changed: a new mtime re-translates every user
        target = dest / pxd.name
        if not target.exists() or target.read_bytes() != pxd.read_bytes():
            shutil.copyfile(pxd, target)
    return str(HERE / "build" / "pxd")


def extensions():
    # the largest first, so that the longest translations and compilations start first
    sources = sorted(KERNELS.rglob("*.pyx"), key=lambda p: (-p.stat().st_size, p.name))
    if not sources:
        sys.exit("setup.py: no Cython sources found in _kernels/ (broken sdist?)")
    from Cython.Build import cythonize

    args = ["-O0", "-g"] if DEBUG else ["-O3", "-g0"]   # (no debug information: a faster build, smaller wheel)
    exts = [
        Extension(f"ssvmlinear._kernels.{p.stem}", [str(p.relative_to(HERE))],
                  include_dirs=[str((KERNELS / "core").relative_to(HERE))],   # the C helpers (core/*.h)
                  extra_compile_args=args, define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")])
        for p in sources
    ]
    directives = dict(language_level=3, boundscheck=DEBUG, wraparound=False, initializedcheck=DEBUG,
                      cdivision=True, nonecheck=False, embedsignature=True)
    return cythonize(exts, include_path=[mirror_pxd()], compiler_directives=directives,
                     build_dir=str(HERE / "build" / "cython"), quiet=True, nthreads=JOBS if JOBS > 1 else 0)


setup(
    packages=["ssvmlinear", "ssvmlinear.models", "ssvmlinear.solvers", "ssvmlinear._kernels"],
    package_dir={"ssvmlinear": "ssvmlinear", "ssvmlinear._kernels": "_kernels"},
    package_data={"ssvmlinear._kernels": ["*/*.pxd", "*/*.pyx", "*/*.h"]},
    ext_modules=extensions(),
    cmdclass={"build_ext": ParallelBuild},
    zip_safe=False,
)
