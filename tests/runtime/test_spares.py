"""How many spares the pool keeps: base at an agent's pace, a recent burst's worth (lean, up to
a cap) after calls come together, base again once the burst is forgotten."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from runtime._spares import CLOSE_S, QUIET_S, Plan, SparePolicy


def arrivals(policy: SparePolicy, times: list[float]) -> None:
    for at in times:
        policy.arrived(at)


def test_calls_a_model_turn_apart_keep_base_full_spares() -> None:
    policy = SparePolicy(base=2, cap=8)
    arrivals(policy, [i * 0.5 for i in range(20)])
    assert policy.plan(10.0) == Plan(full=2)


def test_a_burst_keeps_as_many_spares_as_it_had_calls_the_extra_ones_lean() -> None:
    policy = SparePolicy(base=2, cap=8)
    arrivals(policy, [100 + i * CLOSE_S / 2 for i in range(6)])
    assert policy.plan(101.0) == Plan(full=2, lean=4)


def test_the_cap_bounds_the_spares() -> None:
    policy = SparePolicy(base=2, cap=8)
    arrivals(policy, [i * 0.001 for i in range(40)])
    assert policy.plan(1.0) == Plan(full=2, lean=6)


def test_a_forgotten_burst_gives_base_full_spares_back() -> None:
    policy = SparePolicy(base=2, cap=8)
    arrivals(policy, [i * 0.001 for i in range(40)])
    assert policy.plan(0.1 + QUIET_S + 1) == Plan(full=2)


def test_no_base_means_no_spares() -> None:
    """`fabric exec` runs one snippet: no spare is ever forked."""
    policy = SparePolicy(base=0)
    arrivals(policy, [i * 0.001 for i in range(40)])
    assert policy.plan(1.0) == Plan(full=0)


def test_the_pool_waits_for_a_burst_to_pause_before_refilling() -> None:
    policy = SparePolicy(base=2)
    policy.arrived(5.0)
    assert 0 < policy.until_pause(5.0 + CLOSE_S / 2) <= CLOSE_S
    assert policy.until_pause(5.0 + CLOSE_S * 2) == 0


@given(
    base=st.integers(0, 4),
    cap=st.integers(0, 12),
    gaps=st.lists(st.floats(0, 2), max_size=200),
    later=st.floats(0, 100),
)
def test_plans_stay_within_base_and_cap(
    base: int, cap: int, gaps: list[float], later: float
) -> None:
    """Whatever the arrivals: base full spares, and lean ones only up to the cap."""
    policy = SparePolicy(base=base, cap=cap)
    now = 0.0
    for gap in gaps:
        now += gap
        policy.arrived(now)
    plan = policy.plan(now + later)
    assert plan.full == base
    assert plan.lean >= 0 and plan.wanted <= max(base, cap)
