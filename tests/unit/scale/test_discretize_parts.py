"""ppdm.scale.discretize_parts: cut points and binned parts equal the in-memory ones."""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from numpy.testing import assert_array_equal

from ppdm.exceptions import InvalidParameterError
from ppdm.prepare import datasets
from ppdm.prepare.discretize import (
    _entropy_rows,
    _equal_frequency_cut_points,
    _mdl_cut_points,
    _midpoint,
    discretize,
)
from ppdm.scale.discretize_parts import (
    apply_cut_points_partitioned,
    discretize_partitioned,
    fit_cut_points_partitioned,
)

NUMERIC = ["age", "fnlwgt", "education-num", "capital-gain", "capital-loss",
           "hours-per-week"]  # fmt: skip


def _split(frame: pd.DataFrame, rows: int, folder: Path) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for i, start in enumerate(range(0, len(frame), rows)):
        path = folder / f"part-{i:05d}.parquet"
        frame.iloc[start : start + rows].to_parquet(path, index=False)
        paths.append(path)
    return paths


@pytest.fixture(scope="module")
def adult() -> pd.DataFrame:
    return datasets.load("adult")


@pytest.fixture(scope="module")
def adult_parts(adult, tmp_path_factory) -> dict[int, list[Path]]:
    folder = tmp_path_factory.mktemp("adult")
    return {rows: _split(adult, rows, folder / str(rows)) for rows in (7000, 97)}


def _assert_same_table(got: pd.DataFrame, expected: pd.DataFrame) -> None:
    """assert_frame_equal, with the interval categories compared by their codes."""
    assert list(got.dtypes) == list(expected.dtypes)  # categories and order too
    categorical = [c for c in got if isinstance(got[c].dtype, pd.CategoricalDtype)]
    codes = {c: got[c].cat.codes for c in categorical}
    pd.testing.assert_frame_equal(
        got.assign(**codes),
        expected.assign(**{c: expected[c].cat.codes for c in categorical}),
    )


@pytest.mark.parametrize("rows", [7000, 97])
@pytest.mark.parametrize("method", ["mdl", "equal-frequency"])
def test_adult_cut_points_equal_the_in_memory_ones(rows, method, adult, adult_parts):
    whole = discretize(adult, NUMERIC, "income", method=method, n_bins=4)
    cut_points = fit_cut_points_partitioned(
        adult_parts[rows], NUMERIC, "income", method=method, n_bins=4
    )
    assert cut_points == whole.cut_points
    assert list(cut_points) == NUMERIC
    if method == "mdl":  # separating income: many cuts of age, 14.5 in education
        assert len(cut_points["age"]) > 3 and cut_points["education-num"][-1] == 14.5
    else:
        # the quartile ranks of age fall inside runs of equal ages; each cut
        # is the boundary of that run nearest the rank
        assert cut_points["age"] == [27.5, 37.5, 47.5]
        age = adult["age"].to_numpy()
        for i, cut in enumerate(cut_points["age"], start=1):
            run = max((age == np.floor(cut)).sum(), (age == np.ceil(cut)).sum())
            assert abs((age < cut).sum() - i * len(age) / 4) <= run


@pytest.mark.parametrize("rows, head", [(7000, None), (97, 97 * 20)])
def test_binned_parts_equal_slices_of_the_in_memory_table(
    rows, head, adult, adult_parts, tmp_path
):
    table = adult if head is None else adult.iloc[:head]
    parts = adult_parts[rows][: None if head is None else -(-head // rows)]
    whole = discretize(table, NUMERIC, "income")
    cut_points = fit_cut_points_partitioned(parts, NUMERIC, "income")
    assert cut_points == whole.cut_points
    binned = apply_cut_points_partitioned(parts, cut_points, tmp_path / "binned")
    assert binned.part_rows == tuple(len(pd.read_parquet(p)) for p in parts)
    starts = binned.starts
    for index in (0, len(parts) // 2, len(parts) - 1):
        piece = whole.table.iloc[
            starts[index] : starts[index] + binned.part_rows[index]
        ]
        _assert_same_table(binned.read(index), piece.reset_index(drop=True))
    _assert_same_table(binned.to_pandas(), whole.table)


def test_discretize_partitioned_is_fit_then_apply(adult, adult_parts, tmp_path):
    result = discretize_partitioned(
        adult_parts[7000], ["age", "hours-per-week"], "income", out_dir=tmp_path
    )
    expected = discretize(adult, ["age", "hours-per-week"], "income")
    assert result.cut_points == expected.cut_points and result.method == "mdl"
    _assert_same_table(result.table.to_pandas(), expected.table)
    assert sorted(p.name for p in tmp_path.iterdir())[-1] == "part-00006.parquet"


def test_parts_farmed_out_to_a_dask_cluster_give_the_same_cut_points(
    adult, adult_parts, tmp_path
):
    from distributed import Client, LocalCluster

    with (
        LocalCluster(
            processes=False, n_workers=1, threads_per_worker=2, dashboard_address=None
        ) as cluster,
        Client(cluster) as client,
    ):

        def farm(fn, items):
            return client.gather(client.map(fn, list(items), pure=False))

        cut_points = fit_cut_points_partitioned(
            adult_parts[7000], ["age", "capital-gain"], "income", map_parts=farm
        )
        binned = apply_cut_points_partitioned(
            adult_parts[7000], cut_points, tmp_path, map_parts=farm
        )
    expected = discretize(adult, ["age", "capital-gain"], "income")
    assert cut_points == expected.cut_points
    _assert_same_table(binned.to_pandas(), expected.table)


# -- the implementation before the histogram refactoring, verbatim: an oracle ----------
def _before_mdl(values: np.ndarray, labels: np.ndarray) -> np.ndarray:
    order = np.argsort(values, kind="stable")
    x = values[order]
    codes = labels[order]
    n_classes = int(codes.max()) + 1 if len(codes) else 0
    if len(x) < 2 or len(np.unique(codes)) < 2:
        return np.empty(0)
    starts = np.flatnonzero(np.r_[True, x[1:] != x[:-1]])
    distinct = x[starts]
    n_groups = len(starts)
    one_hot = np.zeros((len(x), n_classes), dtype=np.int64)
    one_hot[np.arange(len(x)), codes] = 1
    cum = np.zeros((n_groups + 1, n_classes), dtype=np.int64)
    cum[1:] = np.add.reduceat(one_hot, starts, axis=0).cumsum(axis=0)
    group_counts = cum[1:] - cum[:-1]
    pure = (group_counts > 0).sum(axis=1) == 1
    majority = group_counts.argmax(axis=1)
    boundary = np.r_[False, ~(pure[1:] & pure[:-1] & (majority[1:] == majority[:-1]))]
    cuts: list[float] = []
    stack = [(0, n_groups)]
    while stack:
        lo, hi = stack.pop()
        candidates = np.flatnonzero(boundary[lo + 1 : hi]) + lo + 1
        if len(candidates) == 0:
            continue
        total = cum[hi] - cum[lo]
        n = int(total.sum())
        left = cum[candidates] - cum[lo]
        right = total - left
        n_left = left.sum(axis=1)
        n_right = n - n_left
        split_entropy = (
            n_left * _entropy_rows(left) + n_right * _entropy_rows(right)
        ) / n
        best = int(np.flatnonzero(split_entropy <= split_entropy.min() + 1e-12)[0])
        g = int(candidates[best])
        ent_s = float(_entropy_rows(total[None, :])[0])
        ent_1 = float(_entropy_rows(left[best][None, :])[0])
        ent_2 = float(_entropy_rows(right[best][None, :])[0])
        gain = ent_s - float(split_entropy[best])
        k_s = int((total > 0).sum())
        k_1 = int((left[best] > 0).sum())
        k_2 = int((right[best] > 0).sum())
        delta = np.log2(3.0**k_s - 2) - (k_s * ent_s - k_1 * ent_1 - k_2 * ent_2)
        if gain > (np.log2(n - 1) + delta) / n:
            cuts.append(float(_midpoint(distinct[g - 1], distinct[g])))
            stack.append((lo, g))
            stack.append((g, hi))
    return np.sort(np.asarray(cuts, dtype=float))


def _before_equal_frequency(values: np.ndarray, n_bins: int) -> np.ndarray:
    x = np.sort(values)
    n = len(x)
    if n == 0 or n_bins <= 1:
        return np.empty(0)
    boundaries = np.flatnonzero(x[1:] != x[:-1]) + 1
    if len(boundaries) == 0:
        return np.empty(0)
    positions = np.rint(np.arange(1, n_bins) * n / n_bins).astype(np.int64)
    right = np.clip(np.searchsorted(boundaries, positions), 0, len(boundaries) - 1)
    left = np.clip(right - 1, 0, len(boundaries) - 1)
    nearer_left = np.abs(boundaries[left] - positions) <= np.abs(
        boundaries[right] - positions
    )
    chosen = np.unique(np.where(nearer_left, boundaries[left], boundaries[right]))
    return np.unique(_midpoint(x[chosen - 1], x[chosen]))


tables = st.integers(min_value=1, max_value=60).flatmap(
    lambda n: st.tuples(
        st.lists(
            st.one_of(
                st.sampled_from([0.0, 1.0, 2.5, 3.0, 7.0, 10.0, -4.0]),
                st.just(np.nan),
                st.integers(-50, 50).map(float),
            ),
            min_size=n,
            max_size=n,
        ),
        st.lists(st.sampled_from(["a", "b", "c", None]), min_size=n, max_size=n),
        st.integers(min_value=1, max_value=n),
        st.integers(min_value=1, max_value=6),
    )
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tables)
def test_random_tables_in_random_parts_give_the_whole_table_cut_points(table):
    values, labels, rows, n_bins = table
    frame = pd.DataFrame(
        {
            "x": values,
            "y": pd.array(labels, dtype="string"),
            "z": np.arange(len(values)),
        }
    )
    with tempfile.TemporaryDirectory() as folder:
        paths = _split(frame, rows, Path(folder))
        for method in ("mdl", "equal-frequency"):
            try:
                expected = discretize(frame, ["x", "z"], "y", method=method,
                                      n_bins=n_bins).cut_points  # fmt: skip
            except InvalidParameterError as err:  # nothing to bin: the same error
                with pytest.raises(InvalidParameterError) as got:
                    fit_cut_points_partitioned(
                        paths, ["x", "z"], "y", method=method, n_bins=n_bins
                    )
                assert str(got.value) == str(err)
                continue
            got = fit_cut_points_partitioned(
                paths, ["x", "z"], "y", method=method, n_bins=n_bins
            )
            assert got == expected
    # the refactored in-memory code gives what it gave before, bit for bit
    x = frame["x"].to_numpy()
    codes = pd.factorize(frame["y"], use_na_sentinel=True)[0]
    keep = ~np.isnan(x) & (codes >= 0)
    assert_array_equal(_mdl_cut_points(x[keep], codes[keep]),
                       _before_mdl(x[keep], codes[keep]))  # fmt: skip
    kept = x[~np.isnan(x)]
    assert_array_equal(_equal_frequency_cut_points(kept, n_bins),
                       _before_equal_frequency(kept, n_bins))  # fmt: skip


def test_errors_are_those_of_the_in_memory_discretize(tmp_path):
    frame = pd.DataFrame(
        {
            "age": [30, 41, 52, 18],
            "gone": [np.nan] * 4,
            "job": pd.array(["a", "b", "a", "b"], dtype="string"),
            "y": pd.array(["p", "q", "p", "q"], dtype="string"),
        }
    )
    paths = _split(frame, 3, tmp_path)
    cases = [
        (["job"], "y", "mdl"),  # not numeric
        (["nope"], "y", "mdl"),  # absent
        (["age"], None, "mdl"),  # no target
        (["age", "y"], "y", "mdl"),  # the target as a feature
        (["age", "gone"], "y", "mdl"),  # all missing: cannot be binned
        (["gone"], None, "equal-frequency"),
        (["age"], None, "k-means"),  # unknown method
    ]
    for columns, target, method in cases:
        with pytest.raises(InvalidParameterError) as expected:
            discretize(frame, columns, target, method=method)
        with pytest.raises(InvalidParameterError) as got:
            fit_cut_points_partitioned(paths, columns, target, method=method)
        assert str(got.value) == str(expected.value)
    with pytest.raises(InvalidParameterError, match="not columns of the table"):
        apply_cut_points_partitioned(paths, {"nope": [1.0]}, tmp_path / "out")
