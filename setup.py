"""Builds the Python package onnx_bcast for `pip install --no-build-isolation .`.

CMake builds only the extension target onnx_bcast_python (with BCAST_PYTHON_STATIC=ON, so the
library's code is inside the one .so) for the interpreter pip runs; setuptools packages it with
python/onnx_bcast/ (__init__.py, the __init__.pyi stubs, py.typed). Metadata: pyproject.toml;
the version is the CMake project's. Environment: CMAKE (the cmake to run), CMAKE_ARGS (extra
configure arguments), CMAKE_BUILD_PARALLEL_LEVEL (jobs), BCAST_PYTHON_BUILD_DIR (where
setuptools and CMake build and write the egg-info, instead of build/ and python/ in the source
tree: with it, `pip install .` writes nothing into the source), BCAST_CMAKE_BUILD_DIR (the CMake
build directory; default: a directory under setuptools' build_temp). ccache is used when
installed (CMakeLists.txt sets it up, with the paths under the source made relative so that
another build of the same sources shares its objects).
"""
import os
import pathlib
import re
import shlex
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = pathlib.Path(__file__).resolve().parent


def cmake_version():
    text = (ROOT / "CMakeLists.txt").read_text()
    return re.search(r"project\(onnx_bcast VERSION ([0-9.]+)", text).group(1)


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        build_dir = pathlib.Path(os.environ.get("BCAST_CMAKE_BUILD_DIR") or
                                 pathlib.Path(self.build_temp) / "cmake").resolve()
        cmake = os.environ.get("CMAKE", "cmake")
        args = [
            f"-DBCAST_PYTHON={sys.executable}",
            "-DBCAST_PYTHON_STATIC=ON",
            "-DBCAST_BUILD_TESTS=OFF",
            "-DBCAST_BUILD_BENCH=OFF",
            "-DCMAKE_BUILD_TYPE=Release",
        ]
        env = dict(os.environ)
        args += shlex.split(env.get("CMAKE_ARGS", ""))
        subprocess.run([cmake, "-S", str(ROOT), "-B", str(build_dir), *args], check=True, env=env)
        jobs = env.get("CMAKE_BUILD_PARALLEL_LEVEL") or str(os.cpu_count() or 1)
        subprocess.run([cmake, "--build", str(build_dir), "--target", "onnx_bcast_python",
                        "-j", jobs], check=True, env=env)
        suffix = subprocess.run(
            [sys.executable, "-c", "import sysconfig; print(sysconfig.get_config_var('EXT_SUFFIX'))"],
            check=True, capture_output=True, text=True).stdout.strip()
        built = build_dir / "python" / "onnx_bcast" / ("_core" + suffix)
        if not built.is_file():
            raise RuntimeError(f"CMake built no {built} (is pybind11-dev installed? see "
                               f"{build_dir / 'CMakeCache.txt'})")
        dest = pathlib.Path(self.get_ext_fullpath(ext.name))
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(built, dest)


def out_of_tree_options():
    build_dir = os.environ.get("BCAST_PYTHON_BUILD_DIR")
    if not build_dir:
        return {}
    build_dir = pathlib.Path(build_dir).resolve()
    build_dir.mkdir(parents=True, exist_ok=True)
    return {"build": {"build_base": str(build_dir)}, "egg_info": {"egg_base": str(build_dir)}}


setup(
    version=cmake_version(),
    options=out_of_tree_options(),
    packages=["onnx_bcast"],
    package_dir={"": "python"},
    package_data={"onnx_bcast": ["__init__.pyi", "py.typed"]},
    ext_modules=[Extension("onnx_bcast._core", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
    zip_safe=False,
)
