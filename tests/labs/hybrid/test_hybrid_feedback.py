"""2.4's exercise feedback names the mistake (issue 31): exercise 3 in GiB and by part,
exercise 4's reversed tuple (after the constraint it breaks: issue 39), exercise 5's swapped groups and its advice pointing to one hint.
Asserted by message key and numbers."""
from __future__ import annotations

import pytest

from labs.exercises import hybrid_checks as hc
from labs.exercises import hybrid_step_checks
from labs.exercises.checks import ExerciseFailed
from labs.exercises.hybrid_checks import check_hybrid_step
from labs.messages import text
from tests.support.messages import recorded_keys


@pytest.fixture
def keys(monkeypatch):
    return recorded_keys(monkeypatch, hc, hybrid_step_checks)


def _fails(check, fn):
    with pytest.raises(ExerciseFailed):
        check(fn)


def _states(n, tp, pp, dp, zero_stage):  # a right answer (the course's own is off-limits)
    n = n / (tp * pp)
    return sum(b * n / (dp if zero_stage >= stage else 1) for b, stage in ((2, 3), (2, 2), (12, 1)))


def _layout(n, layers, heads, gpus, per_node, budget):  # a right answer
    fits = [(tp * pp, -tp, (gpus // (tp * pp), pp, tp))
            for tp in range(1, min(per_node, heads) + 1) for pp in range(1, layers + 1)
            if not (heads % tp or layers % pp or gpus % (tp * pp))
            and _states(n, tp, pp, gpus // (tp * pp), 0) <= budget]
    return min(fits)[2] if fits else None


def test_states_failure_is_in_gib_and_names_the_part(keys, capsys):
    def grads_not_sharded(n, tp, pp, dp, zero_stage):  # ZeRO-2/3 forgot to shard gradients
        right = _states(n, tp, pp, dp, zero_stage)
        return right + (2 * n / (tp * pp)) * (1 - 1 / dp) if zero_stage >= 2 else right

    def shown_case_only(n, tp, pp, dp, zero_stage):
        return _states(n, tp, pp, dp, zero_stage) * 1.5  # wrong, no single part

    _fails(hc.check_states_per_gpu, grads_not_sharded)
    wrong = dict(keys)["checks_2_4.states_wrong"]
    part = dict(keys)["checks_2_4.states_part_off"]
    assert dict(keys)["checks_2_4.part_grads"] == {}
    assert part["got_gib"] == pytest.approx(wrong["grads_gib"] * part["got_gib"] / part["want_gib"])
    assert part["want_gib"] == pytest.approx(wrong["grads_gib"])
    total = wrong["weights_gib"] + wrong["grads_gib"] + wrong["optimizer_gib"]
    assert wrong["want_gib"] == pytest.approx(total)
    assert wrong["got_gib"] - wrong["want_gib"] == pytest.approx(part["got_gib"] - part["want_gib"])
    keys.clear()
    _fails(hc.check_states_per_gpu, shown_case_only)
    assert dict(keys)["checks_2_4.states_wrong"]["which"] == ""
    capsys.readouterr()


def test_states_without_master_weights_name_the_optimizer(keys, capsys):
    def no_master(n, tp, pp, dp, zero_stage):
        return _states(n, tp, pp, dp, zero_stage) - 4 * n / (tp * pp) / (dp if zero_stage else 1)

    _fails(hc.check_states_per_gpu, no_master)
    assert "checks_2_4.part_optimizer" in dict(keys)
    capsys.readouterr()


def test_a_reversed_layout_tuple_is_recognised(keys, capsys):
    def reversed_layout(*args):
        layout = _layout(*args)
        return None if layout is None else tuple(reversed(layout))

    _fails(hc.check_choose_layout, reversed_layout)
    reversed_fields = dict(keys)["checks_2_4.layout_reversed"]
    assert reversed_fields["got"] == tuple(reversed(reversed_fields["expected"]))
    # issue 39: the constraint the tuple breaks comes first, the reversal is added to it
    assert reversed_fields["why"] == "<checks_2_4.layout_tp>"
    capsys.readouterr()


def test_the_messages_exist_in_both_languages():
    for lang in ("zh", "en"):
        assert "5.00" in text("checks_2_4.states_part_off", part="x", got_gib=5, want_gib=1,
                              lang=lang)
        assert "(2, 8, 8)" in text("checks_2_4.layout_reversed", expected=(8, 8, 2),
                                   got=(2, 8, 8), why="tp", lang=lang)


# --- exercise 5 on real ranks -------------------------------------------------------------

def _step(old_new: list[tuple[str, str]] = (), *, cut: tuple[str, str, str] | None = None):
    import torch
    import torch.distributed as dist

    from tests.support.exercise_cells import cell_source, define, replaced

    source = cell_source("2.4_hybrid_parallel.ipynb", "ex2_4_hybrid_step_solution")
    for old, new in old_new:
        source = replaced(source, old, new)
    if cut:
        start, end, insert = cut
        source = source[:source.index(start)] + insert + source[source.index(end):]
    return define(source, ("my_hybrid_step",), "hybrid_feedback", torch=torch, dist=dist)[0]


@pytest.mark.slow
@pytest.mark.numerics
def test_swapped_group_layouts_name_the_membership(keys, capsys):
    swapped = _step([("            tp_group = group", "            dp_group = group"),
                     ("            dp_group = group\n    # (b)", "            tp_group = group\n    # (b)")])
    _fails(check_hybrid_step, swapped)
    fields = dict(keys)["checks_2_4.group_of_pass"]
    # case 1, dp = tp = 2: rank 0's g in the forward pass ran over its DP group [0, 2]
    assert fields["rank"] == 0 and fields["role"] == "TP" and fields["want"] == [0, 1]
    assert fields["phase"] == "<invariants.in_forward>"
    assert fields["note"] == "<checks_2_4.groups_swapped>" and "[0, 2]" in fields["what"]
    capsys.readouterr()


@pytest.mark.slow
@pytest.mark.numerics
def test_new_group_mismatch_points_to_the_hint_it_names(capsys):
    from labs.exercises import catalog

    only_own = _step(cut=("    for d in range(dp):", "    # (b)",
                          "    tp_group = dist.new_group(list(range(dp_index * tp, (dp_index + 1) * tp)))\n"
                          "    dp_group = dist.new_group(list(range(tp_index, dp * tp, tp)))\n"))
    _fails(check_hybrid_step, only_own)
    out = capsys.readouterr().out
    pointer = text("checks.hint_pointer", exercise=catalog.label("ex2_4_hybrid_step"), number=1)
    assert pointer in out, out
    assert text("checks.hint_pointer", exercise=catalog.label("ex2_4_hybrid_step"), number=2) not in out
