"""tensorweave installed as Python users install packages: `pip install .` into a venv from
a checkout, and `pip wheel .` making a wheel that installs into another venv; the hello
program then runs from each with no PYTHONPATH. Nothing is downloaded (--no-index): Debian's
pip, setuptools and numpy do it all. The CMake build reused is this test's own build tree
(TW_CMAKE_BUILD_DIR), so the test builds nothing new."""

import os
import pathlib
import subprocess

import pytest

from conftest import BUILD, ROOT

HELLO = ROOT / "examples" / "python" / "hello.py"


def _run(argv, cwd, timeout=600, env=None):
    result = subprocess.run([str(a) for a in argv], cwd=cwd, env=env, capture_output=True,
                            text=True, timeout=timeout)
    assert result.returncode == 0, "%s failed:\n%s\n%s" % (argv, result.stdout[-3000:],
                                                            result.stderr[-3000:])
    return result


def _clean_env():
    """The environment of a user who installed the package: no PYTHONPATH, no build tree."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "TW_BUILD_DIR", "PYTHONDONTWRITEBYTECODE")}
    env["TW_CMAKE_BUILD_DIR"] = str(BUILD)
    return env


def _venv(path):
    _run(["/usr/bin/python3", "-m", "venv", "--system-site-packages", path], cwd=path.parent)
    return path / "bin" / "python"


def _hello_from(python, cwd):
    out = _run([python, HELLO], cwd=cwd, env=_clean_env(), timeout=60).stdout
    assert out.strip() == "b'Hello, distributed TensorFlow!'", out
    where = _run([python, "-c", "import tensorweave, os; print(os.path.dirname("
                  "tensorweave.__file__))"], cwd=cwd, env=_clean_env(), timeout=60).stdout
    return pathlib.Path(where.strip())


@pytest.mark.skipif(not (BUILD / "python" / "tensorweave").is_dir(),
                    reason="needs the build tree's Python module")
def test_pip_install_and_wheel_from_a_checkout(tmp_path):
    if subprocess.run(["/usr/bin/python3", "-c", "import ensurepip, venv"]).returncode != 0:
        pytest.skip("python3-venv is missing (scripts/setup.sh installs it)")
    env = _clean_env()
    installed = _venv(tmp_path / "env")
    _run([installed, "-m", "pip", "install", "--no-build-isolation", "--no-index", ROOT],
         cwd=tmp_path, env=env)
    package = _hello_from(installed, tmp_path)
    assert package.is_relative_to(tmp_path / "env"), package

    wheels = tmp_path / "wheels"
    _run([installed, "-m", "pip", "wheel", "--no-build-isolation", "--no-index", "--no-deps",
          "-w", wheels, ROOT], cwd=tmp_path, env=env)
    [wheel] = list(wheels.glob("tensorweave-*.whl"))
    other = _venv(tmp_path / "other")
    _run([other, "-m", "pip", "install", "--no-index", wheel], cwd=tmp_path, env=env)
    package = _hello_from(other, tmp_path)
    assert package.is_relative_to(tmp_path / "other"), package
    # The module finds the library beside itself, not in the build tree.
    [module] = list(package.glob("_native*.so"))
    linked = _run(["ldd", module], cwd=tmp_path).stdout
    library = [line for line in linked.splitlines() if "libtensorweave" in line]
    assert library and str(package) in library[0], linked
    assert str(BUILD) not in linked
