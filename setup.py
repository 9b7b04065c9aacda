"""The engine and the simulator's inner loop, compiled to C extensions by mypyc.

Everything else about the package is in pyproject.toml; this file only adds the extensions. The
modules below are plain, fully typed Python (mypy checks them strictly), and the wheel keeps
their sources: a compiled module is imported in place of its source, with the same behaviour,
about 1.5 times faster (docs/decisions.md "The engine compiled by mypyc").

``COLLAB_COMPILE=0`` builds a pure-Python package (a ``py3-none-any`` wheel), for a platform
without a C compiler or for working on these modules without rebuilding them. Where the C
compiler is missing or fails, the build goes on without the extensions and says so.
"""

import os

from setuptools import Distribution, setup
from setuptools.command.build_ext import build_ext
from setuptools.errors import CCompilerError, ExecError, PlatformError

# The hot path of a simulation and of every server command: the engine's records, handlers and
# routing, and the simulator's driver and recorder. Not here: the engine's Protocol classes
# (clock.py, agents.py: a compiled Protocol cannot be runtime-checkable), its package
# __init__ (re-exports) and testing.py (a helper for tests), and anything built on pydantic.
COMPILED = [
    "toolkit/engine/decisions.py",
    "toolkit/engine/events.py",
    "toolkit/engine/groups.py",
    "toolkit/engine/handlers.py",
    "toolkit/engine/loops.py",
    "toolkit/engine/plan.py",
    "toolkit/engine/routing.py",
    "toolkit/engine/run.py",
    "toolkit/engine/state.py",
    "toolkit/simulate/behaviour.py",
    "toolkit/simulate/driver.py",
    "toolkit/simulate/records.py",
]


class Compiled(Distribution):
    """A distribution with extensions (so a platform wheel), whose list build_ext makes."""

    def has_ext_modules(self) -> bool:
        return True


class BuildMypyc(build_ext):
    """Compiles at build time only: pip runs this file for metadata too, and a compile (a full
    type check, then C) would run for each."""

    def finalize_options(self) -> None:
        from mypyc.build import mypycify

        # An isolated build has none of the package's dependencies: their names are Any to
        # mypyc, which compiles calls into them as the interpreter would make them anyway. An
        # in-place build in the project's venv (`make compiled`) ignores the installed ones too
        # (--no-site-packages), so it makes the wheel's C, in a third of the time: mypy would
        # otherwise analyse pydantic, duckdb and the rest, only to compile the same calls.
        args = [*COMPILED, "--ignore-missing-imports", "--follow-imports=silent", "--no-site-packages"]
        # The modules' shared library is a top-level module, as mypyc lays it out, named for the
        # project rather than by a hash of the module list (collab_compiled__mypyc.*.so).
        self.distribution.ext_modules = mypycify(args, opt_level="3", group_name="collab_compiled")
        super().finalize_options()

    def run(self) -> None:
        try:
            super().run()
        except (CCompilerError, ExecError, PlatformError, OSError) as exc:
            # The sources are in the package either way, so a machine that cannot compile them
            # still gets a working install; what was built of the extensions goes (a compiled
            # module without the shared library beside it would not import).
            for ext in self.extensions:
                path = self.get_ext_fullpath(ext.name)
                if os.path.exists(path):
                    os.remove(path)
            print(f"warning: the compiled modules were not built ({exc}); the package runs as pure Python")


if os.environ.get("COLLAB_COMPILE", "1") == "0":
    setup()
else:
    setup(distclass=Compiled, cmdclass={"build_ext": BuildMypyc})
