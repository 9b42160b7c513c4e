"""Test-only helpers in Python, the counterpart of testing/'s C++ fixtures: imported by the
system tests (tests/system) and the benchmarks that need them, never by the tensorweave
package. ctest puts testing/python on the tests' PYTHONPATH (tests/system/CMakeLists.txt);
a benchmark is run with PYTHONPATH=testing/python.

    simulated_hosts   hosts as network and PID namespaces on this machine (needs root)
"""
