"""The image's Dockerfile, checked against what the build really links and what TFJob
needs: the runtime stage's packages provide every shared library the installed programs
load, tini is the ENTRYPOINT (the TFJob manifest leaves it in place), the build stage
installs only the release build's packages, and the kernels' CPU level is a portable
default."""

import pathlib
import re
import shutil
import subprocess

import pytest

from conftest import BUILD, ROOT

DOCKERFILE = (ROOT / "Dockerfile").read_text()


def runtime_stage():
    return DOCKERFILE[DOCKERFILE.rindex("\nFROM "):]


def runtime_packages():
    install = re.search(r"apt-get install -y --no-install-recommends\s*\\\n(.*?)\\\n\s*&&",
                        runtime_stage(), re.S)
    assert install, "the runtime stage installs no packages"
    return install.group(1).split()


def test_runtime_packages_provide_every_library_the_programs_load():
    if shutil.which("dpkg-query") is None or shutil.which("apt-cache") is None:
        pytest.skip("needs Debian's dpkg and apt")
    programs = [BUILD / "tools" / "tw", BUILD / "examples" / "mnist_ps"]
    programs = [p for p in programs if p.exists()]
    if not programs:
        pytest.skip("the programs are not built (%s)" % BUILD)
    closure = subprocess.run(
        ["apt-cache", "depends", "--recurse", "--installed", "--no-recommends",
         "--no-suggests", "--no-conflicts", "--no-breaks", "--no-replaces", "--no-enhances"] +
        runtime_packages(), capture_output=True, text=True, check=True).stdout
    provided = {l.strip() for l in closure.splitlines() if not l.startswith(" ")}
    provided |= {"libc6", "libgcc-s1", "libstdc++6"}  # in debian:12-slim itself
    for program in programs:
        ldd = subprocess.run(["ldd", str(program)], capture_output=True, text=True,
                             check=True).stdout
        for path in re.findall(r"=> (/\S+)", ldd):
            if pathlib.Path(path).resolve().is_relative_to(BUILD.resolve()):
                continue  # libtensorweave: installed by cmake --install
            owner = subprocess.run(["dpkg-query", "-S", str(pathlib.Path(path).resolve())],
                                   capture_output=True, text=True)
            if owner.returncode != 0:
                owner = subprocess.run(["dpkg-query", "-S", path], capture_output=True,
                                       text=True)
            assert owner.returncode == 0, "%s: no package owns %s" % (program.name, path)
            package = owner.stdout.split(":")[0]
            assert package in provided, (
                "%s loads %s from %s, which the runtime stage does not install" %
                (program.name, path, package))


def test_tini_is_the_entrypoint_and_the_examples_data_is_there():
    stage = runtime_stage()
    assert "tini" in runtime_packages() and "dataset-fashion-mnist" in runtime_packages()
    assert 'ENTRYPOINT ["/usr/bin/tini", "--"]' in stage
    assert re.search(r"^USER 1000:1000$", stage, re.M)  # numeric: runAsNonRoot can check it


def test_build_stage_installs_only_the_release_build_and_a_portable_cpu_level():
    build = DOCKERFILE[:DOCKERFILE.rindex("\nFROM ")]
    assert "bash scripts/setup.sh build" in build
    assert re.search(r"^ARG TW_ARCH=x86-64-v2$", DOCKERFILE, re.M)
    assert '-DTW_ARCH="${TW_ARCH}"' in build
    assert "-DTW_BUILD_TESTS=OFF" in build and "-DTW_BUILD_BENCHMARKS=OFF" in build
    # What `setup.sh build` installs is a subset of the full list, without the test
    # frameworks and the data.
    listed = subprocess.run(
        ["bash", "-c", 'source <(sed -n "/^build_packages=(/,/^)/p" "$0"); '
         'printf "%s\\n" "${build_packages[@]}"', str(ROOT / "scripts" / "setup.sh")],
        capture_output=True, text=True, check=True).stdout.split()
    assert "cmake" in listed and "libgrpc++-dev" in listed
    for not_for_building in ("libgtest-dev", "clang-14", "python3-pytest", "linux-doc-6.1",
                             "dataset-fashion-mnist"):
        assert not_for_building not in listed
