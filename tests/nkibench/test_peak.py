"""The peak of every task equals nkibench.md §4 (the paper's formula with its constants)."""
import pytest

from accelopt_graph.nkibench import fraction_of_peak, geomean, hardware_peaks, list_tasks, load_task
from accelopt_graph.nkibench.peak import WorkCount, peak_latency

# task: (trn1 bound, trn1 peak ms, trn2 peak ms), nkibench.md §4
PAPER_PEAKS = {
    "adamw": ("memory", 1.0182, 1.2366),
    "add_rmsnorm_matmul": ("mm", 0.7234, 0.7593),
    "bmm": ("memory", 2.5152, 3.0546),
    "bmm_softmax": ("vec", 4.6811, 3.3608),
    "gqa_full": ("mm", 5.7869, 6.0746),
    "lora": ("mm", 22.4695, 23.5867),
    "mamba": ("vec", 0.8192, 0.5881),
    "matmul": ("mm", 21.7009, 22.7799),
    "matmul_add_rmsnorm": ("mm", 1.4467, 1.5187),
    "rmsnorm_matmul": ("mm", 0.7234, 0.7593),
    "rope_single_freq_apply": ("memory", 0.9146, 1.1108),
    "silu": ("memory", 0.5335, 0.6479),
    "swiglu": ("mm", 3.2551, 3.4170),
    "transpose_matmul": ("mm", 7.7309, 8.1154),
}


@pytest.mark.parametrize("name", sorted(set(PAPER_PEAKS) & set(list_tasks())))
def test_peak_matches_paper_table(name):
    bound, trn1_ms, trn2_ms = PAPER_PEAKS[name]
    task = load_task(name)
    p1, p2 = task.peak("trn1"), task.peak("trn2")
    assert (p1.bound, round(p1.latency_ms, 4)) == (bound, trn1_ms)
    assert round(p2.latency_ms, 4) == trn2_ms
    assert p2.bound == bound  # "the Trn2 bound equals the Trn1 bound for every task"
    assert task.spec.peak.bound == {"trn1": bound, "trn2": bound}
    assert task.peak_latency_ms("trn1") == p1.latency_ms


def test_trn1_constants_are_the_papers():
    hw = hardware_peaks("trn1")
    assert hw.hbm_bw_bytes_per_s.value == 410 * 2**30
    assert hw.mm_flops_per_s.value == 23.75e12
    assert hw.vec_flops_per_s.value == 2 * 128 * 1.12e9
    assert all(c.source for c in (hw.hbm_bw_bytes_per_s, hw.mm_flops_per_s, hw.vec_flops_per_s))


def test_bound_is_the_largest_term():
    p = peak_latency(WorkCount(vec_flops=286_720_000, mm_flops=0, bytes=1), "trn1")
    assert p.bound == "vec" and p.latency_ms == pytest.approx(1.0)
    p = peak_latency(WorkCount(vec_flops=0, mm_flops=23_750_000_000, bytes=440_234_147), "trn1")
    assert p.bound == "mm" and p.latency_ms == pytest.approx(1.0)


def test_unknown_hardware_is_named():
    with pytest.raises(KeyError, match="trn9"):
        hardware_peaks("trn9")


def test_fraction_and_geomean():
    assert fraction_of_peak(2.0, 1.0) == 0.5
    assert geomean([0.25, 1.0]) == pytest.approx(0.5)
    with pytest.raises(ValueError):
        geomean([0.5, 0.0])
    with pytest.raises(ValueError):
        fraction_of_peak(0.0, 1.0)


def test_reduced_parameters_rederive_the_peak():
    task = load_task("matmul", params={"M": 256, "N": 512, "K": 256})
    work = task.work()
    assert work.mm_flops == 2 * 256 * 512 * 256
    assert work.bytes == 4 * (256 * 512 + 512 * 256 + 256 * 256)
