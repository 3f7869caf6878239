"""Builds the wmzip package: its Python modules and the C library beneath
them, compiled from the C library's Go module (../capi, a module of its own
beside the library's) with the Go toolchain, as `go build -buildmode=c-shared`
does."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

HERE = Path(__file__).resolve().parent


def library_name() -> str:
    if sys.platform == "darwin":
        return "libwmzip.dylib"
    if sys.platform == "win32":
        return "wmzip.dll"
    return "libwmzip.so"


class build_go(build_py):
    """build_py, then the shared library into the package."""

    def run(self):
        super().run()
        root = Path(os.environ.get("WMZIP_SOURCE", HERE.parent)).resolve()
        if not (root / "go.mod").is_file() or not (root / "capi" / "go.mod").is_file():
            sys.exit(f"wmzip: {root} is not the wmzip Go module (set WMZIP_SOURCE to its directory)")
        go = os.environ.get("GO") or shutil.which("go")
        if go is None:
            sys.exit("wmzip: building the library needs the Go toolchain (1.26 or later) on PATH, or GO=/path/to/go")
        out = (Path(self.build_lib) / "wmzip" / library_name()).resolve()
        out.parent.mkdir(parents=True, exist_ok=True)
        env = dict(os.environ, CGO_ENABLED="1")
        cmd = [go, "build", "-trimpath", "-buildmode=c-shared", "-o", str(out), "."]
        print("wmzip:", " ".join(cmd), flush=True)
        subprocess.run(cmd, cwd=root / "capi", env=env, check=True)
        # Go writes its own header beside the library; wmzip.h is the one.
        out.with_suffix(".h").unlink(missing_ok=True)


class BinaryDistribution(Distribution):
    """A distribution with a compiled part: its wheel is for one platform."""

    def has_ext_modules(self):
        return True


def check_wheel():
    """Stops with a message naming the Python in use when it cannot build
    a wheel: without the wheel package (or setuptools 70.1 or later, which
    carries bdist_wheel), pip --no-build-isolation says only "invalid
    command 'bdist_wheel'"."""
    try:
        import wheel  # noqa: F401
        return
    except ImportError:
        pass
    try:
        from setuptools.command import bdist_wheel  # noqa: F401
        return
    except ImportError:
        pass
    import setuptools

    base = getattr(sys, "_base_executable", sys.executable)
    sys.exit(
        f"wmzip: the Python building this package, {sys.executable} (made from {base}, "
        f"Python {sys.version.split()[0]}, setuptools {setuptools.__version__}), has no 'wheel' package, "
        "so it cannot build a wheel without build isolation. Make the venv from a Python whose "
        "packages have it, on Debian the system's: /usr/bin/python3 -m venv --system-site-packages .venv "
        "(with python3-wheel installed); or install wheel into this venv first."
    )


if any(a.startswith("bdist_wheel") or a == "dist_info" for a in sys.argv[1:]):
    check_wheel()

setup(cmdclass={"build_py": build_go}, distclass=BinaryDistribution)
