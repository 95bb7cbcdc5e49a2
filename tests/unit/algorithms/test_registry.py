"""The algorithm registry agrees with the classes it names, and answers alone.

The configuration and ``ppdm algorithms`` read :mod:`ppdm.algorithm_registry`
without importing the algorithms; these tests hold each entry to the class it
names (signature, capabilities, checks), so the two cannot drift apart.
"""

from __future__ import annotations

import inspect

import pytest

from ppdm.algorithm_registry import DECLARED, registered
from ppdm.algorithms import ALGORITHMS, get_algorithm
from ppdm.exceptions import InvalidParameterError, UnsupportedRequirementError
from ppdm.privacy import Requirement


@pytest.mark.parametrize("name", sorted(DECLARED))
def test_an_entry_names_its_class_and_states_its_signature(name):
    entry = DECLARED[name]
    cls = entry.load()
    assert ALGORITHMS[name] is cls and cls.name == name and cls._entry is entry
    signature = inspect.signature(cls.__init__)
    keyword_only = {
        p.name: p.default
        for p in signature.parameters.values()
        if p.kind == p.KEYWORD_ONLY
    }
    # The same names, in the same order, with the same defaults.
    assert list(keyword_only.items()) == list(entry.parameters.items())
    assert set(entry.constraints) <= set(entry.parameters)
    assert cls.capabilities() == entry.capabilities()
    assert cls._parameter_constraints == dict(entry.constraints)
    assert cls.summary == entry.summary


@pytest.mark.parametrize("name", sorted(DECLARED))
def test_defaults_pass_the_entry_and_the_class_alike(name):
    entry = DECLARED[name]
    entry.check_parameters({})
    get_algorithm(name).check_params()


@pytest.mark.parametrize(
    ("name", "params"),
    [
        ("mondrian", {"split": "mean"}),
        ("kactus", {"pruning_confidence": 0.9}),
        ("pbg-ea", {"eps": [1.0, 2.0, 3.0]}),
        ("pbg-ea", {"objectives": "k-l-glm", "eps": [1.0, 2.0]}),
        ("dmpd", {"n_folds": 1}),
        ("safepub", {"key": "no scheme"}),
        ("fs-anonymity", {"critrion": "containment"}),
    ],
)
def test_an_entry_refuses_what_building_the_algorithm_refuses(name, params):
    """Same exception, same message, from the entry and from the class."""
    with pytest.raises(InvalidParameterError) as by_entry:
        DECLARED[name].check_parameters(params)
    with pytest.raises(InvalidParameterError) as by_class:
        get_algorithm(name, **params).check_params()
    assert str(by_entry.value) == str(by_class.value)


@pytest.mark.parametrize(
    ("name", "params", "l"),
    [
        ("fs-anonymity", {}, 2),
        ("fs-anonymity", {"criterion": "containment"}, 1),
        ("dmpd", {}, 2),
        ("dmpd", {}, 1),
        ("approx-ac", {}, 2),
        ("mondrian", {}, 3),
    ],
)
def test_an_entry_adapts_and_checks_requirements_as_the_class_does(name, params, l):
    requirement = Requirement.of(("age", "zip"), "disease", k=4, l=l)
    entry = DECLARED[name]
    algorithm = get_algorithm(name, **params)
    adapted = entry.adapt_requirement(requirement, target="y", params=params)
    assert adapted == algorithm.adapt_requirement(requirement, target="y")
    outcomes = []
    for check in (entry.check_requirement, type(algorithm).check_requirement):
        try:
            check(adapted, target="y")
            outcomes.append(None)
        except UnsupportedRequirementError as refused:
            outcomes.append(str(refused))
    assert outcomes[0] == outcomes[1]
    # The known answers: containment replaces k-anonymity, dmpd adds set
    # anonymity, l-diversity is refused where the model is unsupported.
    names = [m.name for m in adapted.models]
    if params.get("criterion") == "containment":
        assert names == ["k-anonymity-by-containment"]
    if name == "dmpd":
        assert names[-1] == "set-anonymity"
    refused = name in ("fs-anonymity", "approx-ac") and l > 1
    assert (outcomes[0] is not None) == refused


def test_a_class_registered_at_run_time_is_seen_by_the_registry(toy_algorithms):
    entries = registered()
    for name, cls in toy_algorithms.items():
        assert entries[name].load() is cls
        assert entries[name].capabilities() == cls.capabilities()
    assert set(DECLARED) < set(entries)
