"""Mondrian on a frequency table: the recoding applied to the rows is the release.

``Mondrian().recode(FrequencyTable.of(table, columns), spec, rng).apply(table)``
must equal ``Mondrian().anonymize(table, spec, rng).table`` (index reset), with
the same evidence, whether the frequency table is built at once, combined from
partitions, or from the rows in another order; and the weighted partition of
a frequency table must be the partition of the rows it describes.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ppdm.algorithms.mondrian import Mondrian, mondrian_partition
from ppdm.exceptions import InfeasibleConstraintError, InvalidParameterError
from ppdm.model import AnonymizationSpec
from ppdm.prepare import datasets
from ppdm.prepare.discretize import discretize
from ppdm.scale.frequency import FrequencyTable

ADULT_QIS = ["age", "workclass", "education", "marital-status", "race", "sex",
             "native-country", "hours-per-week"]  # fmt: skip
GERMAN_QIS = ["age", "personal-status-sex", "job", "housing", "duration", "purpose"]

#: Requirement name -> shorthand arguments of AnonymizationSpec.of (besides k).
REQUIREMENTS = {
    "k": {},
    "k+distinct-l": dict(l=3),
    "entropy-l": dict(l=2, l_variant="entropy"),
    "recursive-cl": dict(l=3, l_variant="recursive", c=4.0),
    "t-closeness": dict(t=0.25),
}
DATASETS = {
    # name: (QIs, numeric QIs to discretize, sensitive, target, k)
    "adult": (ADULT_QIS, ["age", "hours-per-week"], "occupation", "income", 10),
    "german": (GERMAN_QIS, ["age", "duration"], "savings", "credit", 5),
}


def rng() -> np.random.Generator:
    return np.random.default_rng(0)


def frequency_columns(spec: AnonymizationSpec) -> list[str]:
    """The key columns the pipeline hands to recode: QIs, sensitive, target."""
    names = [*spec.quasi_identifiers, *spec.requirement.sensitive_attributes]
    if spec.target is not None:
        names.append(spec.target)
    return list(dict.fromkeys(names))


def released_in_memory(table: pd.DataFrame, spec: AnonymizationSpec):
    release = Mondrian().anonymize(table, spec, rng())
    return release.table.reset_index(drop=True), dict(release.evidence)


def assert_same_release(
    table: pd.DataFrame, spec: AnonymizationSpec, frequencies: FrequencyTable
) -> None:
    expected, evidence = released_in_memory(table, spec)
    recoding = Mondrian().recode(frequencies, spec, rng())
    pd.testing.assert_frame_equal(recoding.apply(table), expected)
    assert dict(recoding.evidence) == evidence
    assert recoding.records_in == len(table) == frequencies.n_rows
    assert recoding.algorithm == "mondrian" and dict(recoding.params) == {
        "split": "median"
    }
    assert recoding.kept.all()  # Mondrian suppresses nothing
    # One line per distinct quasi-identifier combination, released as strings.
    qis = list(spec.quasi_identifiers)
    assert not recoding.original.duplicated().any()
    assert len(recoding.original) == len(table[qis].drop_duplicates())
    assert all(recoding.released[q].dtype == "string" for q in qis)


# --------------------------------------------------------------------------
# Adult and German, raw and discretized quasi-identifiers, every model
# --------------------------------------------------------------------------
def _dataset(name: str, binned: bool, rows: int | None = None) -> pd.DataFrame:
    table = datasets.load(name)
    if rows is not None:
        table = table.sample(n=rows, random_state=11).reset_index(drop=True)
    qis, numeric, _, target, _ = DATASETS[name]
    if binned:
        table = discretize(table, numeric, target, method="mdl").table
    return table


def _spec(name: str, requirement: str) -> AnonymizationSpec:
    qis, _, sensitive, target, k = DATASETS[name]
    arguments = REQUIREMENTS[requirement]
    return AnonymizationSpec.of(
        tuple(qis), sensitive if arguments else None, target, k=k, **arguments
    )


@pytest.fixture(scope="module")
def tables() -> dict:
    return {
        (name, binned): _dataset(name, binned, 5000 if name == "adult" else None)
        for name in DATASETS
        for binned in (False, True)
    }


@pytest.mark.parametrize("requirement", sorted(REQUIREMENTS))
@pytest.mark.parametrize("binned", [False, True], ids=["raw", "discretized"])
@pytest.mark.parametrize("name", sorted(DATASETS))
def test_recoding_applied_to_the_rows_is_the_release(tables, name, binned, requirement):
    table = tables[(name, binned)]
    spec = _spec(name, requirement)
    frequencies = FrequencyTable.of(table, frequency_columns(spec))
    assert len(frequencies) < len(table)  # the path runs on fewer lines
    assert_same_release(table, spec, frequencies)
    # The requirement is not trivial: the table is cut into many classes.
    evidence = Mondrian().recode(frequencies, spec, rng()).evidence
    assert evidence["n_partitions"] > 10


def test_full_adult_recoding_is_the_release():
    adult = datasets.load("adult")
    for requirement in ("k", "k+distinct-l"):
        spec = _spec("adult", requirement)
        assert_same_release(
            adult, spec, FrequencyTable.of(adult, frequency_columns(spec))
        )


@pytest.mark.parametrize(
    "requirement, n_parts", list(zip(sorted(REQUIREMENTS), [3, 4, 5, 3, 4]))
)
def test_combined_partitions_give_the_same_recoding(tables, requirement, n_parts):
    table = tables[("adult", False)]
    spec = _spec("adult", requirement)
    columns = frequency_columns(spec)
    # Partitions of unequal sizes, rows dealt at random.
    owner = np.random.default_rng(n_parts).integers(0, n_parts, len(table))
    parts = [table[owner == p] for p in range(n_parts)]
    combined = FrequencyTable.combine(FrequencyTable.of(p, columns) for p in parts)
    whole = FrequencyTable.of(table, columns)
    pd.testing.assert_frame_equal(combined.frame, whole.frame)
    recoding = Mondrian().recode(combined, spec, rng())
    # Each partition released on its own: together, the in-memory release.
    release = Mondrian().anonymize(table, spec, rng()).table
    for p, part in enumerate(parts):
        pd.testing.assert_frame_equal(
            recoding.apply(part), release[owner == p].reset_index(drop=True)
        )
    assert dict(recoding.evidence) == dict(
        Mondrian().anonymize(table, spec, rng()).evidence
    )


@pytest.mark.parametrize("requirement", sorted(REQUIREMENTS))
def test_shuffled_rows_give_the_same_recoding_and_release(tables, requirement):
    table = tables[("german", False)]
    spec = _spec("german", requirement)
    columns = frequency_columns(spec)
    shuffled = table.sample(frac=1.0, random_state=5)
    ordered = Mondrian().recode(FrequencyTable.of(table, columns), spec, rng())
    again = Mondrian().recode(FrequencyTable.of(shuffled, columns), spec, rng())
    pd.testing.assert_frame_equal(again.original, ordered.original)
    pd.testing.assert_frame_equal(again.released, ordered.released)
    assert dict(again.evidence) == dict(ordered.evidence)
    # The shuffled rows recoded are their in-memory release, row for row, and
    # hold the same multiset of released rows as the ordered table's.
    expected, _ = released_in_memory(shuffled, spec)
    pd.testing.assert_frame_equal(again.apply(shuffled), expected)
    by_rows = released_in_memory(table, spec)[0]
    assert _multiset(expected) == _multiset(by_rows)


def _multiset(frame: pd.DataFrame) -> list:
    return sorted(map(repr, frame.astype(object).itertuples(index=False)))


@pytest.mark.parametrize("requirement", ["k", "k+distinct-l", "t-closeness"])
def test_scaled_counts_are_the_release_of_the_repeated_table(tables, requirement):
    # Ten copies of German: the combined frequency table has the same lines
    # with ten times the counts, and its recoding is the release of the
    # 10,000 rows (k and the medians count rows, not lines).
    german = tables[("german", True)]
    spec = _spec("german", requirement)
    single = FrequencyTable.of(german, frequency_columns(spec))
    scaled = FrequencyTable.combine([single] * 10)
    assert (scaled.counts == 10 * single.counts).all()
    repeated = pd.concat([german] * 10, ignore_index=True)
    assert_same_release(repeated, spec, scaled)


# --------------------------------------------------------------------------
# The weighted partition is the partition of the rows
# --------------------------------------------------------------------------
def test_weighted_partition_is_the_partition_of_the_expanded_rows():
    table = datasets.load("german")
    qis = GERMAN_QIS
    frequencies = FrequencyTable.of(table, [*qis, "savings"])
    weighted = mondrian_partition(
        frequencies.keys, qis, 7, sensitive_attribute="savings", l=2,
        weights=frequencies.counts,
    )  # fmt: skip
    rows = mondrian_partition(
        frequencies.expand(), qis, 7, sensitive_attribute="savings", l=2
    )
    assert (np.repeat(weighted.ids, frequencies.counts) == rows.ids).all()
    assert weighted.cuts == rows.cuts and weighted.rounds == rows.rounds
    # Counting lines instead of rows gives another partition: fewer cuts.
    unweighted = mondrian_partition(
        frequencies.keys, qis, 7, sensitive_attribute="savings", l=2
    )
    assert unweighted.n_partitions < weighted.n_partitions


def test_a_heavy_line_moves_the_median():
    # Lines x = 1..4; x = 1 stands for 5 rows. The rows' lower median is x = 1
    # (position 3 of 8), so k = 3 cuts {1} | {2, 3, 4}; by lines it would cut
    # {1, 2} | {3, 4}.
    keys = pd.DataFrame({"x": [1, 2, 3, 4]})
    weighted = mondrian_partition(keys, ["x"], 3, weights=np.array([5, 1, 1, 1]))
    assert weighted.ids.tolist() == [0, 1, 1, 1]
    assert mondrian_partition(keys, ["x"], 2).ids.tolist() == [0, 0, 1, 1]
    # The right half {2, 3, 4} has 3 rows: not cut again at k = 3.
    frequencies = FrequencyTable.of(
        pd.DataFrame({"x": [1, 1, 1, 1, 1, 2, 3, 4], "y": ["a"] * 8}), ["x", "y"]
    )
    spec = AnonymizationSpec.of(("x",), None, "y", k=3)
    recoding = Mondrian().recode(frequencies, spec, rng())
    assert recoding.released["x"].tolist() == ["1", "[2, 4]", "[2, 4]", "[2, 4]"]
    assert recoding.evidence["partition_size"] == {"min": 3, "median": 4.0, "max": 5}


@pytest.mark.parametrize(
    "weights, match",
    [
        (np.array([1, 0, 2, 1]), "at least 1"),
        (np.array([1, 2, 3]), "4 integer row counts"),
        (np.array([1.0, 2.0, 1.0, 1.0]), "integer"),
    ],
    ids=["zero", "length", "float"],
)
def test_bad_weights_are_refused(weights, match):
    keys = pd.DataFrame({"x": [1, 2, 3, 4]})
    with pytest.raises(InvalidParameterError, match=match):
        mondrian_partition(keys, ["x"], 1, weights=weights)


def test_k_above_the_rows_of_the_frequency_table_is_infeasible():
    table = pd.DataFrame({"x": [1, 1, 2, 2, 3], "y": ["a"] * 5})
    frequencies = FrequencyTable.of(table, ["x", "y"])
    spec = AnonymizationSpec.of(("x",), None, "y", k=5)
    assert Mondrian().recode(frequencies, spec, rng()).evidence["n_partitions"] == 1
    spec = AnonymizationSpec.of(("x",), None, "y", k=6)
    with pytest.raises(InfeasibleConstraintError, match="5"):
        Mondrian().recode(frequencies, spec, rng())


# --------------------------------------------------------------------------
# Random small tables: ints with NA, categoricals, strings
# --------------------------------------------------------------------------
COLOURS = ["red", "blue", "green"]
BANDS = ["< 10", "[10, 20)", "[20, 30)", ">= 30"]
SETTINGS = settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


@st.composite
def small_tables(draw):
    n = draw(st.integers(1, 40))

    def column(elements):
        return draw(st.lists(elements, min_size=n, max_size=n))

    ints = column(st.one_of(st.none(), st.integers(-3, 6)))
    table = pd.DataFrame({
        # A nullable integer column, and the same kind of values as floats.
        "count": pd.array(ints, dtype="Int64"),
        "num": pd.Series([np.nan if v is None else v for v in
                          column(st.one_of(st.none(), st.integers(0, 9)))],
                         dtype="float64"),
        "band": pd.Categorical(column(st.sampled_from(BANDS + [None])),
                               categories=BANDS, ordered=True),
        "shape": pd.Categorical(column(st.sampled_from(["x", "y", "z", None])),
                                categories=["z", "y", "x", "w"]),  # w unused
        "colour": pd.array(column(st.sampled_from(COLOURS + [None])), dtype="string"),
        "city": pd.Series(column(st.sampled_from(["oslo", "rome", "lima"])),
                          dtype=object),
        "disease": pd.array(column(st.sampled_from(["flu", "cold", "ulcer", None])),
                            dtype="string"),
        "dose": column(st.integers(0, 3)),
        "class": pd.array(column(st.sampled_from(["yes", "no"])), dtype="string"),
    })  # fmt: skip
    qi_columns = ["count", "num", "band", "shape", "colour", "city"]
    qis = draw(st.permutations(qi_columns))[: draw(st.integers(1, len(qi_columns)))]
    k = draw(st.integers(1, 6))
    model = draw(st.sampled_from(sorted(REQUIREMENTS)))
    sensitive = draw(st.sampled_from(["disease", "dose"]))
    n_parts = draw(st.integers(1, 5))
    owner = draw(st.lists(st.integers(0, n_parts - 1), min_size=n, max_size=n))
    return table, list(qis), k, model, sensitive, np.asarray(owner)


SMALL_MODELS = {
    "k": {},
    "k+distinct-l": dict(l=2),
    "entropy-l": dict(l=1.5, l_variant="entropy"),
    "recursive-cl": dict(l=2, l_variant="recursive", c=2.0),
    "t-closeness": dict(t=0.3),
}


# Many random tables (about 12 s): in the slow stage, so the default run keeps
# its 10-minute budget beside a busy core.
@pytest.mark.slow
@SETTINGS
@given(small_tables())
def test_random_tables_recoding_is_the_release(case):
    table, qis, k, model, sensitive, owner = case
    arguments = SMALL_MODELS[model]
    spec = AnonymizationSpec.of(
        tuple(qis), sensitive if arguments else None, "class", k=k, **arguments
    )
    columns = frequency_columns(spec)
    parts = [table[owner == p] for p in np.unique(owner)]
    combined = FrequencyTable.combine(FrequencyTable.of(p, columns) for p in parts)
    try:
        expected, evidence = released_in_memory(table, spec)
    except InfeasibleConstraintError as error:
        with pytest.raises(InfeasibleConstraintError) as raised:
            Mondrian().recode(combined, spec, rng())
        assert str(raised.value) == str(error)
        return
    recoding = Mondrian().recode(combined, spec, rng())
    pd.testing.assert_frame_equal(recoding.apply(table), expected)
    assert dict(recoding.evidence) == evidence
    release = Mondrian().anonymize(table, spec, rng()).table
    for p, part in zip(np.unique(owner), parts):
        pd.testing.assert_frame_equal(
            recoding.apply(part), release[owner == p].reset_index(drop=True)
        )
    # The weighted partition of the lines is the partition of the rows.
    requirement = spec.requirement
    weighted = mondrian_partition(
        combined.keys, qis, requirement=requirement, weights=combined.counts
    )
    rows = mondrian_partition(combined.expand(), qis, requirement=requirement)
    assert (np.repeat(weighted.ids, combined.counts) == rows.ids).all()
