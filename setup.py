"""The tunelock Python package, built by CMake (pyproject.toml has the metadata).

    pip install --no-build-isolation .                 # from the clone
    python3 -m build --no-isolation --wheel            # a wheel in dist/

`build_ext` configures the project with TUNELOCK_PYTHON_ONLY (the engine,
libtunelock_c, the `tunelock` CLI and, where UCX is found, the UCX
collective; no CUDA, tests or benchmarks), builds the target
`tunelock_python_package` and copies the library and the CLI into the
package: tunelock/libtunelock_c.so and tunelock/bin/tunelock. The package
itself is pure Python over ctypes, so the wheel is tagged py3-none-<platform>:
one wheel per platform, any Python 3.

The version is the CMake project's (`project(tunelock VERSION x.y.z)` in
CMakeLists.txt), read from there.

Environment:
  TUNELOCK_PYTHON_BUILD_DIR  where the CMake and setuptools builds go
                             (default: build/python in the source tree; kept,
                             so a second install only rebuilds what changed)
  CMAKE_ARGS                 extra arguments for the CMake configure step
  CMAKE_BUILD_PARALLEL_LEVEL jobs for the build (default: the usable CPUs)
  CMAKE_GENERATOR            as CMake reads it (default: Ninja where found)
"""
import glob
import importlib.util
import os
import re
import shlex
import shutil
import subprocess
import sys

from setuptools import Distribution, setup
from setuptools.command.build_ext import build_ext
from setuptools.command.sdist import sdist

ROOT = os.path.dirname(os.path.abspath(__file__))
PACKAGE = "tunelock"
# What the CMake build adds to the package, relative to its folder.
NATIVE_FILES = ("libtunelock_c.so", os.path.join("bin", "tunelock"))
# Built only where the CUDA toolkit's CUPTI is found (`tunelock watch`).
OPTIONAL_NATIVE_FILES = ("libtunelock_watch.so",)
# The sources an sdist needs to build those (TUNELOCK_PYTHON_ONLY's subdirectories).
SDIST_SOURCES = ("CMakeLists.txt", "LICENSE", "README.md", "CHANGELOG.md",
                 "cmake", "schemas", "engine", "cli", "launcher", "python")


def cmake_version():
    """`project(tunelock VERSION x.y.z)` from the top-level CMakeLists.txt."""
    path = os.path.join(ROOT, "CMakeLists.txt")
    with open(path, encoding="utf-8") as file:
        match = re.search(r"^\s*project\s*\(\s*tunelock\s+VERSION\s+([0-9]+(?:\.[0-9]+){0,3})\b",
                          file.read(), re.MULTILINE)
    if not match:
        sys.exit(f"setup.py: no `project(tunelock VERSION x.y.z)` in {path}")
    return match.group(1)


def build_dir():
    path = os.environ.get("TUNELOCK_PYTHON_BUILD_DIR") or os.path.join(ROOT, "build", "python")
    return os.path.abspath(path)


def build_jobs():
    if os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL"):
        return []  # cmake --build reads it
    try:
        jobs = len(os.sched_getaffinity(0))
    except AttributeError:
        jobs = os.cpu_count() or 1
    return ["-j", str(jobs)]


def configured_source(cache):
    """The source tree a CMake build folder was configured for."""
    with open(cache, encoding="utf-8", errors="replace") as file:
        for line in file:
            if line.startswith("CMAKE_HOME_DIRECTORY:"):
                return os.path.realpath(line.split("=", 1)[1].strip())
    return None


class BinaryDistribution(Distribution):
    """Not pure: the wheel carries a native library and program."""

    def has_ext_modules(self):
        return True


class CMakeBuild(build_ext):
    """Builds the package's native files with CMake and copies them into it."""

    def run(self):
        cmake = shutil.which("cmake")
        if not cmake:
            sys.exit("setup.py: cmake not found; tunelock's library is built with CMake 3.25 or "
                     "newer (Debian: apt-get install cmake ninja-build, see README.md)")
        binary_dir = os.path.join(build_dir(), "cmake")
        configure = [cmake, "-S", ROOT, "-B", binary_dir,
                     "-DCMAKE_BUILD_TYPE=Release",
                     "-DTUNELOCK_PYTHON_ONLY=ON",
                     "-DTUNELOCK_BUILD_TESTS=OFF",
                     "-DTUNELOCK_BUILD_BENCHMARKS=OFF",
                     "-DTUNELOCK_WITH_CUDA=OFF"]
        cache = os.path.join(binary_dir, "CMakeCache.txt")
        if os.path.exists(cache) and configured_source(cache) != os.path.realpath(ROOT):
            # Configured for another source tree (an unpacked sdist, another
            # clone): CMake would refuse it, so it starts afresh.
            shutil.rmtree(binary_dir)
        fresh = not os.path.exists(cache)
        if fresh and not os.environ.get("CMAKE_GENERATOR") and shutil.which("ninja"):
            configure += ["-G", "Ninja"]
        configure += shlex.split(os.environ.get("CMAKE_ARGS", ""))
        self.spawn(configure)
        self.spawn([cmake, "--build", binary_dir, "--target", "tunelock_python_package"]
                   + build_jobs())

        built = os.path.join(binary_dir, "python", PACKAGE)
        target = os.path.join(ROOT, "python", PACKAGE) if self.inplace else \
            os.path.join(self.build_lib, PACKAGE)
        self._outputs = []
        for name in NATIVE_FILES + OPTIONAL_NATIVE_FILES:
            source, destination = os.path.join(built, name), os.path.join(target, name)
            if not os.path.isfile(source):
                if name in OPTIONAL_NATIVE_FILES:
                    continue
                sys.exit(f"setup.py: the CMake build did not make {source}")
            self.mkpath(os.path.dirname(destination))
            self.copy_file(source, destination)  # keeps the program's mode
            self._outputs.append(destination)

    def get_outputs(self):
        return list(getattr(self, "_outputs", []))

    def get_source_files(self):
        return []


class SourceDistribution(sdist):
    """The sdist carries the C++ sources the CMake step builds from."""

    def make_release_tree(self, base_dir, files):
        extra = []
        for entry in SDIST_SOURCES:
            path = os.path.join(ROOT, entry)
            if os.path.isfile(path):
                extra.append(entry)
            for folder, subfolders, names in os.walk(path):
                subfolders[:] = [d for d in subfolders if d != "__pycache__" and not d.startswith(".")]
                extra += [os.path.relpath(os.path.join(folder, n), ROOT) for n in names
                          if not n.endswith((".pyc", ".so")) and not n.startswith(".")]
        files = sorted(set(files) | set(extra))
        super().make_release_tree(base_dir, files)


commands = {"build_ext": CMakeBuild, "sdist": SourceDistribution}

SYSTEM_WHEEL = "/usr/lib/python3/dist-packages:/usr/share/python-wheels"


def system_wheel():
    """The system's 'wheel' package (Debian's python3-wheel, or the .whl of
    python3-wheel-whl), for a fresh venv: it has setuptools older than 70.1
    and no wheel, `pip install --no-build-isolation` adds none, and nothing
    may be downloaded. Only that one package is taken from the folder, not
    the system's others. True when it was found."""
    for folder in os.environ.get("TUNELOCK_SYSTEM_WHEEL", SYSTEM_WHEEL).split(":"):
        package = os.path.join(folder, "wheel", "__init__.py")
        if folder and os.path.isfile(package):
            spec = importlib.util.spec_from_file_location(
                "wheel", package, submodule_search_locations=[os.path.dirname(package)])
            module = importlib.util.module_from_spec(spec)
            sys.modules["wheel"] = module
            spec.loader.exec_module(module)
            return True
        archives = sorted(glob.glob(os.path.join(folder, "wheel-*.whl"))) if folder else []
        if archives:
            sys.path.append(archives[-1])  # a wheel of pure Python imports from its zip
            return True
    return False


def find_bdist_wheel():
    try:  # setuptools 70.1 and newer carry bdist_wheel; before, the wheel package does
        from setuptools.command.bdist_wheel import bdist_wheel as found
        return found
    except ImportError:
        pass
    for attempt in range(2):
        try:
            from wheel.bdist_wheel import bdist_wheel as found
            return found
        except ImportError:
            if attempt or not system_wheel():
                return None
    return None


bdist_wheel = find_bdist_wheel()

# pip asks for the metadata first (dist_info, which needs bdist_wheel with
# setuptools older than 70.1), then for the wheel: both fail the same way.
if bdist_wheel is None and {"bdist_wheel", "dist_info"} & set(sys.argv):
    # What setuptools would say is "invalid command 'bdist_wheel'".
    sys.exit("tunelock: building a wheel (what `pip install` does) needs the 'wheel' package, "
             "which this Python lacks, with setuptools older than 70.1, and none was found in "
             f"{os.environ.get('TUNELOCK_SYSTEM_WHEEL', SYSTEM_WHEEL)}. In this venv: "
             "`python -m pip install wheel` (online), or `python -m pip install "
             "/usr/share/python-wheels/wheel-*.whl` (offline, Debian's python3-wheel-whl); "
             "or install python3-wheel on Debian, which this install then finds from any "
             "venv; then run the install again")

if bdist_wheel is not None:
    class PlatformWheel(bdist_wheel):
        """py3-none-<platform>: the library is loaded with ctypes, not as an
        extension module, so any Python 3 on the platform takes the wheel."""

        def get_tag(self):
            _, _, platform = super().get_tag()
            return "py3", "none", platform

    commands["bdist_wheel"] = PlatformWheel

# setuptools' own folders (build/lib, build/bdist.*, the egg-info) beside the
# CMake build, not in the source tree's top or in python/.
_base = build_dir()
os.makedirs(os.path.join(_base, "egg-info"), exist_ok=True)

setup(
    version=cmake_version(),
    distclass=BinaryDistribution,
    cmdclass=commands,
    options={"build": {"build_base": os.path.join(_base, "setuptools")},
             "egg_info": {"egg_base": os.path.join(_base, "egg-info")}},
)
