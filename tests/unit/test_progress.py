"""Progress reports: nested listeners, steps, and parts of a step."""

from __future__ import annotations

import pytest

from ppdm import progress


def test_nested_listeners_both_hear_and_leave_with_their_block():
    outer, inner = [], []
    with progress.listening(lambda f, text: outer.append((f, text))):
        progress.report(0.25, "a")
        with progress.listening(lambda f, text: inner.append((f, text))):
            progress.report(0.5, "b")
        progress.report(2.0, "c")  # clamped
    progress.report(0.75, "nobody")
    assert outer == [(0.25, "a"), (0.5, "b"), (1.0, "c")]
    assert inner == [(0.5, "b")]


def test_steps_reach_only_step_listeners():
    steps, reports = [], []
    with progress.listening(
        lambda f, text: reports.append(f), on_step=lambda *s: steps.append(s)
    ):
        progress.step("anonymize", 4, 8)
    assert steps == [("anonymize", 4, 8)] and reports == []


def test_within_maps_a_part_onto_its_share_and_composes():
    seen = []
    with progress.listening(lambda f, text: seen.append(f)):
        with progress.within(0.2, 0.6):
            progress.report(0.0)
            progress.report(0.5)
            with progress.within(0.5, 1.0):
                progress.report(0.5)
            progress.report(1.0)
        progress.report(0.9)
    assert seen == pytest.approx([0.2, 0.4, 0.5, 0.6, 0.9])
