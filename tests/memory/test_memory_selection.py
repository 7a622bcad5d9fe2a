"""TopK experience-pair selection (algorithm.md, "Choosing experience pairs")."""
import pytest

from accelopt_graph.memory.selection import PairCandidate, offer_per_plan, select_pairs


def pc(parent, plan, sample, speedup):
    return PairCandidate(parent, plan, sample, speedup)


def test_plan_offers_best_sample_when_it_beats_the_parent():
    offers = offer_per_plan([pc("p", "a", "s1", 1.2), pc("p", "a", "s2", 1.5), pc("p", "a", "s3", 0.5)])
    assert [o.sample_id for o in offers] == ["s2"]


def test_plan_offers_worst_sample_when_all_are_slower():
    offers = offer_per_plan([pc("p", "a", "s1", 0.8), pc("p", "a", "s2", 0.5)])
    assert [o.sample_id for o in offers] == ["s2"]
    assert offers[0].polarity == "negative"


def test_plan_whose_best_ties_the_parent_offers_nothing():
    assert offer_per_plan([pc("p", "a", "s1", 1.0), pc("p", "a", "s2", 0.5)]) == []


def test_equal_samples_go_to_the_earlier_one():
    offers = offer_per_plan([pc("p", "a", "first", 1.3), pc("p", "a", "second", 1.3)])
    assert offers[0].sample_id == "first"


def test_thresholds_are_strict():
    cands = [pc("p", "a", "at_max", 1.04), pc("p", "b", "above_max", 1.041),
             pc("p", "c", "at_min", 1 / 1.15), pc("p", "d", "below_min", 1 / 1.15 - 1e-6),
             pc("p", "e", "mild_loss", 0.95)]
    assert {c.sample_id for c in select_pairs(cands)} == {"above_max", "below_min"}


def test_positives_capped_at_half_topk_largest_first_negatives_fill_worst_first():
    pos = [pc("p", f"pos{i}", f"sp{i}", 1.1 + 0.1 * i) for i in range(10)]
    neg = [pc("p", f"neg{i}", f"sn{i}", 0.8 - 0.05 * i) for i in range(10)]
    chosen = select_pairs(pos + neg, top_k=8)
    assert [c.sample_id for c in chosen] == ["sp9", "sp8", "sp7", "sp6", "sn9", "sn8", "sn7", "sn6"]


def test_negatives_fill_slots_positives_leave_free():
    cands = [pc("p", "pos", "sp", 1.5)] + [pc("q", f"n{i}", f"sn{i}", 0.5 + 0.01 * i) for i in range(10)]
    chosen = select_pairs(cands, top_k=8)
    assert len(chosen) == 8
    assert chosen[0].sample_id == "sp" and [c.sample_id for c in chosen[1:]] == [f"sn{i}" for i in range(7)]


def test_at_most_one_pair_per_parent_and_plan():
    cands = [pc("p", "a", f"s{i}", 1.5 + i) for i in range(5)] + [pc("q", "a", "other", 2.0)]
    chosen = select_pairs(cands, top_k=8)
    assert sorted(c.source for c in chosen) == [("p", "a"), ("q", "a")]


def test_faithful_mode_flips_negatives_only():
    chosen = select_pairs([pc("p", "a", "up", 1.5), pc("p", "b", "down", 0.5)], faithful=True)
    assert [(c.sample_id, c.flipped) for c in chosen] == [("up", False), ("down", True)]


def test_payload_travels_untouched():
    marker = object()
    [chosen] = select_pairs([PairCandidate("p", "a", "s", 1.5, payload=marker)])
    assert chosen.payload is marker


@pytest.mark.parametrize("speedup", [0.0, -1.0, float("nan"), float("inf")])
def test_bad_speedup_is_rejected_with_the_sample_named(speedup):
    with pytest.raises(ValueError, match="'s9'"):
        pc("p", "a", "s9", speedup)


def test_bad_arguments_are_rejected():
    with pytest.raises(ValueError, match="top_k"):
        select_pairs([], top_k=-1)
    with pytest.raises(ValueError, match="max_threshold"):
        select_pairs([], max_threshold=0.9)
