"""bspkit's one version: the Python package, CMake (project(bspkit VERSION ...)) and
include/bsp.h (BSPKIT_VERSION_MAJOR/MINOR, checked by tests/python/test_version.py) follow it."""

__version__ = "0.1.0"
