"""Build the Cython kernels in ``_kernels/`` as ``ssvmlinear._kernels.<name>``.

Cython resolves a module's ``.pxd`` by its qualified name, so every ``_kernels/*.pxd`` is mirrored
into ``build/pxd/ssvmlinear/_kernels/`` and that folder is put on Cython's include path (see
notes on packaging). Set ``SSVM_DEBUG=1`` to build with bounds checks and assertions on.
"""
import os
import shutil
import sys
from pathlib import Path

from setuptools import Extension, setup

HERE = Path(__file__).resolve().parent
KERNELS = HERE / "_kernels"
DEBUG = os.environ.get("SSVM_DEBUG", "0") not in ("", "0")


def mirror_pxd():
    dest = HERE / "build" / "pxd" / "ssvmlinear" / "_kernels"
    dest.mkdir(parents=True, exist_ok=True)
    for pkg in (dest.parent, dest):
        (pkg / "__init__.pxd").touch()
    for pxd in KERNELS.glob("*.pxd"):
        shutil.copyfile(pxd, dest / pxd.name)
    return str(HERE / "build" / "pxd")


def extensions():
    sources = sorted(KERNELS.glob("*.pyx"))
    if not sources:
        sys.exit("setup.py: no Cython sources found in _kernels/ (broken sdist?)")
    from Cython.Build import cythonize

    args = ["-O0", "-g"] if DEBUG else ["-O3"]
    exts = [
        Extension(f"ssvmlinear._kernels.{p.stem}", [str(p.relative_to(HERE))],
                  include_dirs=[str(KERNELS.relative_to(HERE))],   # C helpers (*.h) beside the .pyx
                  extra_compile_args=args, define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")])
        for p in sources
    ]
    directives = dict(language_level=3, boundscheck=DEBUG, wraparound=False, initializedcheck=DEBUG,
                      cdivision=True, nonecheck=False, embedsignature=True)
    return cythonize(exts, include_path=[mirror_pxd()], compiler_directives=directives,
                     build_dir=str(HERE / "build" / "cython"), quiet=True)


setup(
    packages=["ssvmlinear", "ssvmlinear._kernels"],
    package_dir={"ssvmlinear": "ssvmlinear", "ssvmlinear._kernels": "_kernels"},
    package_data={"ssvmlinear._kernels": ["*.pxd", "*.pyx"]},
    ext_modules=extensions(),
    zip_safe=False,
)
