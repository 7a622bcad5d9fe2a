"""The one-namespace install: the repo folders import as accelopt_graph.* and not as top-level names."""
import importlib
import subprocess
import sys


def test_rooms_import_under_one_namespace():
    for name in ["accelopt_graph.tools.backend", "accelopt_graph.tools.nkisim.trace",
                 "accelopt_graph.memory.experience", "accelopt_graph.nkibench"]:
        assert importlib.import_module(name).__name__ == name


def test_generic_names_are_not_squatted():
    import accelopt_graph.tools as t

    assert t.__name__ == "accelopt_graph.tools"
    out = subprocess.run([sys.executable, "-c", "import importlib.util,sys; "
                          "print(importlib.util.find_spec('nkibench'))"],
                         capture_output=True, text=True, cwd="/", check=True)
    assert out.stdout.strip() == "None"


def test_cli_entry_point_runs():
    out = subprocess.run([sys.executable, "-m", "accelopt_graph", "version"],
                         capture_output=True, text=True, check=True)
    assert out.stdout.strip()
