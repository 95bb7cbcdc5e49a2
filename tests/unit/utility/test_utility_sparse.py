"""Sparse feature matrices: memory bounded by the rows, the same models as dense."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

from ppdm.exceptions import OutOfMemoryError
from ppdm.utility import c45_learner
from ppdm.utility.cba import CBAClassifier
from ppdm.utility.features import CellFeaturizer
from ppdm.utility.learners import (
    BlockImputer,
    MembershipNB,
    SklearnModel,
    feature_view,
)
from ppdm.utility.scoring import _constant_features

ROOT = Path(__file__).resolve().parents[3]


def _dates(rng: np.random.Generator, n: int) -> np.ndarray:
    days = rng.integers(0, 365 * 70, n)
    return (pd.Timestamp("1935-01-01") + pd.to_timedelta(days, unit="D")).strftime(
        "%Y-%m-%d"
    )


@pytest.fixture(scope="module")
def hospital() -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """A training part with a date column of ~7,000 distinct values, its
    release (value sets, suppression, ranges) and a test part."""
    rng = np.random.default_rng(11)
    n = 12_000
    table = pd.DataFrame(
        {
            "birth_date": _dates(rng, n),
            "sex": rng.choice(["F", "M"], n),
            "stay": rng.integers(1, 30, n).astype(float),
            "y": rng.choice(["no", "yes"], n, p=[0.7, 0.3]),
        }
    )
    train, test = table.iloc[:9000], table.iloc[9000:]
    released = train.astype({"birth_date": object, "stay": object}).copy()
    released.loc[released.index[::3], "birth_date"] = "*"
    pairs = released.index[1::3]
    others = np.roll(train["birth_date"].to_numpy(), 1)[1::3]
    released.loc[pairs, "birth_date"] = [
        f"{{{a}|{b}}}" for a, b in zip(train.loc[pairs, "birth_date"], others)
    ]
    released.loc[released.index[::4], "stay"] = "[1, 10]"
    return train, released, test


def test_many_valued_column_is_sparse_and_stores_what_the_rows_hold(hospital):
    train, released, _ = hospital
    featurizer = CellFeaturizer(exclude=["y"]).fit(train)
    width = len(featurizer.feature_names_)
    domain = train["birth_date"].nunique()
    assert domain > 6000 and width == domain + 2 + 1  # dates, sex, stay
    assert "{" in released["birth_date"].iloc[1]  # value sets of two dates
    for table in (train, released):
        x = featurizer.transform(table)
        assert sp.isspmatrix_csr(x) and x.shape == (len(table), width)
        dates = x[:, :domain]
        # a value: one entry; a value set {a|b}: two; suppressed: none
        sizes = np.diff(dates.indptr)
        expected = [
            0 if cell == "*" else len(set(cell.strip("{}").split("|")))
            for cell in table["birth_date"].astype(str)
        ]
        np.testing.assert_array_equal(sizes, expected)
        # at most one entry per row and numeric or nominal column besides
        assert x.nnz <= len(table) * (2 + 2)
        stored = x.data.nbytes + x.indices.nbytes + x.indptr.nbytes
        assert stored <= 16 * len(table) * 4  # vs 8 * rows * width dense
        assert stored * 500 < 8 * len(table) * width


def test_sparse_encoding_equals_an_independent_one_hot():
    original = pd.DataFrame({"colour": ["b", "a", "c", "a", "b"], "n": [1, 0, 2, 0, 5]})
    x = CellFeaturizer().fit(original).transform(original)
    expected = pd.get_dummies(original["colour"]).to_numpy(dtype=float)
    np.testing.assert_array_equal(x.toarray()[:, :3], expected)
    np.testing.assert_array_equal(x.toarray()[:, 3], [1, 0, 2, 0, 5])
    assert x.nnz == 5 + 3  # the zeros of "n" are not stored


@pytest.fixture(scope="module")
def german_like() -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """A small table with a class signal, its release and a test part."""
    rng = np.random.default_rng(5)
    n = 600
    age = rng.integers(18, 80, n).astype(float)
    job = rng.choice(["a", "b", "c", "d"], n)
    signal = (age > 45) | (job == "a")
    y = np.where(signal ^ (rng.random(n) < 0.1), "good", "bad")
    table = pd.DataFrame({"age": age, "job": job, "y": y})
    train, test = table.iloc[:400], table.iloc[400:]
    released = train.astype(object).copy()
    released.loc[released.index[::5], "job"] = "*"
    released.loc[released.index[1::5], "job"] = "{b|c}"
    released.loc[released.index[2::7], "age"] = "[20, 40]"
    released.loc[released.index[3::11], "age"] = "*"
    return train, released, test


@pytest.mark.parametrize("model", ["decision_tree", "naive_bayes", "cba", "zeros_tree"])
def test_sparse_and_dense_matrices_give_the_same_predictions(german_like, model):
    train, released, test = german_like
    missing = "zeros" if model == "zeros_tree" else "weka"
    name = "decision_tree" if model == "zeros_tree" else model
    bins, ranges = feature_view(name, missing, "midpoint")
    featurizer = CellFeaturizer(
        exclude=["y"], numeric_bins=bins, numeric_ranges=ranges
    ).fit(train)
    x_train, x_test = featurizer.transform(released), featurizer.transform(test)
    y_train = released["y"].to_numpy()

    def build():
        blocks = featurizer.blocks_
        if model == "decision_tree":
            return c45_learner.C45Learner(blocks=blocks)
        if model == "naive_bayes":
            return MembershipNB(blocks=blocks, ranges=featurizer.ranges_)
        if model == "cba":
            return CBAClassifier(blocks=blocks, minsup=0.05)
        # max_dense_cells=0: the sparse path of scikit-learn's tree
        return SklearnModel(
            estimator=name, blocks=blocks, missing=missing, max_dense_cells=0
        )

    on_sparse = build().fit(x_train, y_train)
    on_dense = build().fit(x_train.toarray(), y_train)
    np.testing.assert_array_equal(
        on_sparse.predict(x_test), on_dense.predict(x_test.toarray())
    )
    if model != "cba":
        np.testing.assert_allclose(
            on_sparse.predict_proba(x_test),
            on_dense.predict_proba(x_test.toarray()),
            rtol=0,
            atol=1e-12,
        )
    # and the result is not trivial: the signal is learned
    y_test = test["y"].to_numpy()
    majority = max(np.mean(y_test == "good"), np.mean(y_test == "bad"))
    assert np.mean(on_sparse.predict(x_test) == y_test) > majority + 0.05


def test_logistic_regression_sparse_path_finds_the_dense_optimum(german_like):
    """Above the dense limit the scaler does not centre; the intercept absorbs
    the means, so the model's predictions are the centred model's."""
    train, released, test = german_like
    featurizer = CellFeaturizer(exclude=["y"]).fit(train)
    x_train, x_test = featurizer.transform(released), featurizer.transform(test)
    y = released["y"].to_numpy()
    dense = SklearnModel(blocks=featurizer.blocks_).fit(x_train, y)
    sparse = SklearnModel(blocks=featurizer.blocks_, max_dense_cells=0).fit(x_train, y)
    assert dense.dense_ and not sparse.dense_
    assert sp.issparse(sparse.pipeline_[:-1].transform(x_train))
    np.testing.assert_array_equal(dense.predict(x_test), sparse.predict(x_test))
    np.testing.assert_allclose(
        dense.predict_proba(x_test), sparse.predict_proba(x_test), atol=1e-3
    )


def test_dense_model_predicts_a_large_sparse_matrix_in_row_blocks(german_like):
    train, released, test = german_like
    featurizer = CellFeaturizer(exclude=["y"]).fit(train)
    x_train, x_test = featurizer.transform(released), featurizer.transform(test)
    y = released["y"].to_numpy()
    model = SklearnModel(blocks=featurizer.blocks_).fit(x_train, y)
    assert model.dense_
    whole = model.predict_proba(x_test)
    # the limit lowered after fitting: the 200 test rows go 10 rows at a time
    model.set_params(max_dense_cells=len(featurizer.feature_names_) * 10)
    np.testing.assert_array_equal(model.predict_proba(x_test), whole)
    np.testing.assert_array_equal(
        model.predict(x_test), model.predict(x_test.toarray())
    )


def test_wide_blocks_are_scored_on_the_values_present(hospital, monkeypatch):
    """C4.5 on a wide block scores only the values a node's rows hold; the tree
    is the one scored on the whole domain."""
    train, released, test = hospital
    featurizer = CellFeaturizer(exclude=["y"]).fit(train)
    x_train = featurizer.transform(released.iloc[:3000])
    y = released["y"].to_numpy()[:3000]
    x_test = featurizer.transform(test)
    compact = c45_learner.C45Learner(blocks=featurizer.blocks_).fit(x_train, y)
    monkeypatch.setattr(c45_learner, "_WIDE", 10**9)
    whole = c45_learner.C45Learner(blocks=featurizer.blocks_).fit(x_train, y)
    assert compact.n_leaves_ == whole.n_leaves_
    np.testing.assert_array_equal(
        compact.predict_proba(x_test), whole.predict_proba(x_test)
    )


def test_block_imputer_fills_sparse_as_dense(german_like):
    train, released, _ = german_like
    featurizer = CellFeaturizer(exclude=["y"]).fit(train)
    x = featurizer.transform(released)
    imputer = BlockImputer(blocks=featurizer.blocks_).fit(x)
    dense = BlockImputer(blocks=featurizer.blocks_).fit(x.toarray())
    for a, b in zip(imputer.fill_, dense.fill_):
        np.testing.assert_array_equal(a, b)
    out = imputer.transform(x)
    assert sp.issparse(out) and not np.isnan(out.data).any()
    np.testing.assert_array_equal(out.toarray(), dense.transform(x.toarray()))


def test_constant_features_read_sparse_and_dense_alike():
    varying = sp.csr_matrix(np.array([[0.0, np.nan], [0.0, 1.0], [2.0, np.nan]]))
    constant = sp.csr_matrix(np.array([[1.0, np.nan], [1.0, np.nan]]))
    zero = sp.csr_matrix((3, 2))
    for x, expected in ((varying, False), (constant, True), (zero, True)):
        assert _constant_features(x) is expected
        assert _constant_features(x.toarray()) is expected


_LIMITED = textwrap.dedent(
    """
    import resource, sys
    import numpy as np, pandas as pd
    from ppdm.exceptions import OutOfMemoryError
    from ppdm.utility.features import CellFeaturizer

    n = 40_000
    days = np.arange(n) % 20_000
    original = pd.DataFrame({"admitted": [f"d{d:05d}" for d in days]})
    featurizer = CellFeaturizer(suppressed="uniform").fit(original)
    released = pd.DataFrame({"admitted": ["*"] * n})  # each row spreads over 20,000
    with open("/proc/self/status") as status:
        vm = next(int(l.split()[1]) for l in status if l.startswith("VmSize:"))
    # 256 MiB more address space than now: 40,000 x 20,000 entries need ~10 GB
    resource.setrlimit(resource.RLIMIT_AS, ((vm + 256 * 1024) * 1024, resource.RLIM_INFINITY))
    try:
        featurizer.transform(released)
    except OutOfMemoryError as err:
        print(err)
        sys.exit(3)
    """
)


def test_a_column_that_does_not_fit_raises_out_of_memory_naming_it():
    """A real MemoryError (an address-space limit) while encoding one column
    becomes OutOfMemoryError naming the column."""
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    done = subprocess.run(
        [sys.executable, "-c", _LIMITED],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        check=False,
    )
    assert done.returncode == 3, done.stderr[-2000:]
    line = done.stdout.strip()
    assert "\n" not in line
    assert line.startswith(
        "column 'admitted' (20,000 features, 40,000 rows) does not fit in memory "
        "as model features: Unable to allocate"
    ), line
    assert issubclass(OutOfMemoryError, MemoryError)
