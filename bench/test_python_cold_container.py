"""The stall arithmetic of bench/python_cold_container.py (bench/cold-shapes.sh's container)."""

import random

from python_cold_container import finish


def test_work_that_meets_no_stall_takes_its_own_time():
    assert finish(1.0, 0.3, origin=0.0, stall=0.2, every=5.0) == 1.3
    assert finish(3.0, 0.5, origin=0.0, stall=0.0, every=5.0) == 3.5  # stalls off


def test_work_starting_in_a_stall_waits_for_its_end():
    assert abs(finish(5.1, 0.05, origin=0.0, stall=0.2, every=5.0) - 5.25) < 1e-9


def test_work_running_into_a_stall_is_held_for_all_of_it():
    assert abs(finish(4.95, 0.1, origin=0.0, stall=0.2, every=5.0) - 5.25) < 1e-9
    assert abs(finish(4.95, 9.0, origin=0.0, stall=0.2, every=5.0) - 14.35) < 1e-9  # two stalls


def test_no_stall_before_the_first_period():
    assert finish(0.0, 0.1, origin=0.0, stall=0.2, every=5.0) == 0.1


def test_work_ending_at_a_periods_edge_ends_whatever_the_rounding():
    # a clock origin far from zero, and starts just before a stall: recomputing the period from
    # the clock at its edge held some of these in an endless loop
    rng = random.Random(1)
    for _ in range(200_000):
        origin = rng.uniform(100, 100_000)
        start = origin + rng.randint(1, 30) * 5.0 - rng.uniform(0, 0.05)
        work = rng.uniform(0.011, 0.05)
        end = finish(start, work, origin=origin, stall=0.2, every=5.0)
        assert start + work <= end <= start + work + 0.2 + 1e-6
