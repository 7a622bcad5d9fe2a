"""The retrieval benchmark script still runs (tiny sizes; the real numbers come from running it by hand)."""
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "memory_retrieval.py"


def test_benchmark_runs_at_tiny_size():
    out = subprocess.run([sys.executable, str(SCRIPT), "--items", "60", "--queries", "3", "--k", "4"],
                         capture_output=True, text=True, timeout=300, check=True).stdout
    row = out.strip().splitlines()[-1].split("|")
    assert row[3].strip() == "220"  # 60 bulk items + 20 rounds of 8
    assert float(row[8]) > 0  # p50 ms
