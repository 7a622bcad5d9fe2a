"""Map the repository's top-level folders onto the one `accelopt_graph` import namespace.

`tools`, `memory` and `nkibench` are generic names that would clash with other installed
packages, so they are installed as `accelopt_graph.tools`, `accelopt_graph.memory` and
`accelopt_graph.nkibench` (architecture.md, repository layout).
"""
from setuptools import find_packages, setup

ROOTS = {
    "accelopt_graph": "accelopt_graph",
    "accelopt_graph.tools": "tools",
    "accelopt_graph.memory": "memory",
    "accelopt_graph.nkibench": "nkibench",
}

packages = []
for name, folder in ROOTS.items():
    packages.append(name)
    packages.extend(f"{name}.{sub}" for sub in find_packages(folder))

setup(packages=packages, package_dir=ROOTS)
