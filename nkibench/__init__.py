"""NKIBench: the 14 Trainium tasks, their NumPy references and baseline kernels, the peak
calculator and the bench runner (installed as accelopt_graph.nkibench)."""
from accelopt_graph.nkibench.bench import BenchReport, BenchRow, run_bench
from accelopt_graph.nkibench.peak import Peak, WorkCount, fraction_of_peak, geomean, hardware_peaks, peak_latency
from accelopt_graph.nkibench.spec import TaskSpec, TaskSpecError
from accelopt_graph.nkibench.task import TASKS_DIR, Task, list_tasks, load_task

__all__ = ["BenchReport", "BenchRow", "Peak", "TASKS_DIR", "Task", "TaskSpec", "TaskSpecError", "WorkCount",
           "fraction_of_peak", "geomean", "hardware_peaks", "list_tasks", "load_task", "peak_latency", "run_bench"]
