"""Pure policies: beam selection, stop rules, plan merging, ledger totals and budget."""
from __future__ import annotations

import math

import pytest

from accelopt_graph.ledger import budget_stop_reason, total, totals_by_iteration, totals_by_role
from accelopt_graph.search.beam import best_candidate, rank, select_beam
from accelopt_graph.search.plans import merge_duplicate_plans, plan_text
from accelopt_graph.search.stopping import stop_reason
from accelopt_graph.settings import BudgetSettings
from accelopt_graph.tools.backend import EvalResult, EvalStatus
from accelopt_graph.types import Candidate, LLMCall, Plan, speedup


def cand(id, latency, *, parent=None, plan=None, order=(1,), code_hash=None, status=EvalStatus.OK):
    result = EvalResult(status=status, latency_ms=latency if status is EvalStatus.OK else None)
    return Candidate(id=id, parent_id=parent, plan_id=plan, code=f"code {id}", code_hash=code_hash or id,
                     result=result, order=order)


def test_speedup_is_parent_over_sample():
    assert speedup(10.0, 5.0) == 2.0
    assert speedup(None, 5.0) is None and speedup(10.0, None) is None


def test_project_beam_lets_parents_compete_and_dedups():
    p = cand("p", 10.0, order=(0,))
    samples = [cand("a1", 12.0, parent="p", plan="A", order=(1, 0, 0, 0)),
               cand("a2", 9.0, parent="p", plan="A", order=(1, 0, 0, 1)),
               cand("b1", 9.0, parent="p", plan="B", order=(1, 0, 1, 0), code_hash="a2"),  # same code as a2
               cand("c1", 11.0, parent="p", plan="C", order=(1, 0, 2, 0))]
    beam = select_beam([p], samples, width=3)
    assert [c.id for c in beam] == ["a2", "p", "c1"]  # one per plan, hashes collapse, parent competes


def test_project_beam_ties_go_to_earlier_discovery():
    p = cand("p", 10.0, order=(0,))
    samples = [cand("late", 5.0, parent="p", plan="B", order=(1, 0, 1, 0)),
               cand("early", 5.0, parent="p", plan="A", order=(1, 0, 0, 0))]
    assert [c.id for c in select_beam([p], samples, width=1)] == ["early"]


def test_reference_beam_falls_back_to_parent_at_infinity():
    p, q = cand("p", 10.0, order=(0,)), cand("q", 20.0, order=(0, 1))
    samples = [cand("a", 30.0, parent="q", plan="A", order=(1, 1, 0, 0)),
               cand("x", None, parent="p", plan="B", order=(1, 0, 1, 0), status=EvalStatus.INCORRECT)]
    beam = select_beam([p, q], samples, width=2, policy="reference")
    # the slower sample "a" beats its faster parent q (parents only compete as fallbacks); the failed
    # group offers p at +inf
    assert [c.id for c in beam] == ["a", "p"]


def test_beam_keeps_parents_when_everything_failed():
    p = cand("p", 10.0, order=(0,))
    bad = cand("x", None, parent="p", plan="A", status=EvalStatus.COMPILE_ERROR)
    assert [c.id for c in select_beam([p], [bad], width=2)] == ["p"]
    with pytest.raises(ValueError, match="width"):
        select_beam([p], [], width=0)


def test_best_candidate_ignores_incorrect():
    assert best_candidate([cand("x", None, status=EvalStatus.INCORRECT), cand("y", 3.0)]).id == "y"
    assert best_candidate([]) is None


@pytest.mark.parametrize("kwargs, expected", [
    (dict(round_done=3, iterations=3), "iterations_done"),
    (dict(round_done=1, iterations=3), None),
    (dict(round_done=1, iterations=3, budget_reason="budget_usd"), "budget_usd"),
    (dict(round_done=1, iterations=3, best_fraction_of_peak=0.9, target_fraction_of_peak=0.8), "target_reached"),
    (dict(round_done=1, iterations=3, rounds_without_improvement=2, patience=2), "no_improvement"),
    (dict(round_done=1, iterations=3, rounds_without_improvement=1, patience=2), None),
])
def test_stop_rules(kwargs, expected):
    assert stop_reason(**kwargs) == expected


def plan(index, title, change, rank=0, ok=True):
    return Plan(id=f"p{rank}.{index}", candidate_id="c", iteration=0, rank=rank, index=index, title=title,
                change=change, text=change, ok=ok)


def test_near_duplicate_plans_merge_into_the_first():
    plans = [plan(0, "Fuse exp and reciprocal", "fuse the exp and reciprocal into one activation"),
             plan(1, "Fuse exp and reciprocal", "fuse the exp and the reciprocal into one activation"),
             plan(2, "Bigger tiles", "use 2048 wide free dimension tiles to amortize DMA overhead"),
             plan(0, "Fuse exp and reciprocal", "fuse the exp and reciprocal into one activation", rank=1)]
    from accelopt_graph.memory.embedding import make_embedder, normalize_rows

    vectors = normalize_rows(make_embedder("hashing").embed([plan_text(p) for p in plans]))
    merged = {p.id: p.merged_into for p in merge_duplicate_plans(plans, vectors, threshold=0.92)}
    assert merged == {"p0.0": None, "p0.1": "p0.0", "p0.2": None, "p1.0": None}


def call(role, it, p, c, usd, ok=True):
    return LLMCall(role=role, model="m", iteration=it, prompt_tokens=p, completion_tokens=c, usd=usd, ok=ok)


def test_ledger_totals_and_budget():
    calls = [call("planner", 0, 100, 10, 0.5), call("executor", 0, 200, 50, 1.0),
             call("executor", 1, 300, 60, 1.5, ok=False)]
    assert total(calls).tokens == 720 and math.isclose(total(calls).usd, 3.0)
    assert totals_by_role(calls)["executor"].calls == 2 and totals_by_role(calls)["executor"].failed == 1
    assert totals_by_iteration(calls)[0].prompt_tokens == 300
    spent = total(calls)
    assert budget_stop_reason(spent, evaluations=0, wall_s=0, budget=BudgetSettings(usd=3.0)) == "budget_usd"
    assert budget_stop_reason(spent, evaluations=0, wall_s=0, budget=BudgetSettings(usd=3.5)) is None
    assert budget_stop_reason(spent, evaluations=5, wall_s=0, budget=BudgetSettings(evaluations=5)) == "budget_evaluations"
    assert budget_stop_reason(spent, evaluations=0, wall_s=0, budget=BudgetSettings(tokens=700)) == "budget_tokens"
    assert budget_stop_reason(spent, evaluations=0, wall_s=61, budget=BudgetSettings(wall_s=60)) == "budget_wall_s"


def hw(id, latency, spread, order):
    result = EvalResult(status=EvalStatus.OK, latency_ms=latency, source="hardware",
                        latency_stats={"spread": spread})
    return Candidate(id=id, code=id, code_hash=id, result=result, order=order)


def test_hardware_differences_within_the_spread_are_ties():
    parent = hw("parent", 10.0, 0.01, (0,))
    noise = hw("noise", 9.95, 0.01, (1, 0, 0, 0))  # 0.5% faster, inside the 1% spread
    real = hw("real", 9.5, 0.01, (1, 0, 1, 0))
    assert [c.id for c in rank([noise, parent, real])] == ["real", "parent", "noise"]
    assert best_candidate([noise, parent]).id == "parent"
    simulated = [cand("a", 9.95, order=(1,)), cand("b", 10.0, order=(0,))]
    assert best_candidate(simulated).id == "a"  # the simulator is deterministic: no tolerance
