"""A feature selection release is judged over its released columns as they are.

fs-anonymity publishes 0/1 columns ``<quasi-identifier>=<value>``; the
verifier's classes, k, risk and class counts are those of the released
feature vectors (an attacker who knows a person's quasi-identifiers knows the
zeros too). Each figure is checked against a count written from the
definition on generated tables, with and without a population, under plain
k-anonymity and under containment (whose weaker attacker the certificate
names).
"""

from __future__ import annotations

import io
from collections import Counter, defaultdict

import numpy as np
import pandas as pd
import pytest

from ppdm.algorithms.fs_anonymity import FsAnonymity
from ppdm.model import AnonymizationSpec
from ppdm.privacy import KAnonymity, KAnonymityByContainment, Requirement
from ppdm.release.artifacts import table_to_csv_bytes
from ppdm.selection import binary_encode, containment_brute_force
from ppdm.utility.report import build_utility
from ppdm.verify import VerifyOptions, verify_tables

QIS = ("age", "job", "city")


def _table(seed: int, n: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "age": rng.integers(18, 70, n),
            "job": rng.choice(["a", "b", "c", "d"], n, p=[0.5, 0.3, 0.15, 0.05]),
            "city": rng.choice(["x", "y", "z", ""], n, p=[0.6, 0.25, 0.1, 0.05]),
            "y": rng.choice(["no", "yes"], n),
        }
    )


def _release(table: pd.DataFrame, seed: int) -> tuple[pd.DataFrame, list[str]]:
    """Random features of the binned table, released as text (the published form)."""
    rng = np.random.default_rng(seed)
    binned = table.assign(
        age=pd.cut(table["age"], [17, 30, 45, 70]).map(
            lambda iv: f"({iv.left}, {iv.right}]"
        )
    )
    encoding = binary_encode(binned, QIS)
    chosen = sorted(
        rng.choice(encoding.n_features, rng.integers(1, 6), replace=False).tolist()
    )
    frame = encoding.frame(chosen).assign(y=table["y"].to_numpy())
    text = pd.read_csv(
        io.BytesIO(table_to_csv_bytes(frame)), dtype=str, keep_default_na=False
    )
    return text, [encoding.names[j] for j in chosen]


def _population_count(table: pd.DataFrame, names: list[str], vector: tuple) -> int:
    """Records of ``table`` whose raw values give ``vector`` on the features."""
    hits = 0
    for _, row in table.iterrows():
        mine = []
        for name in names:
            attribute, value = name.split("=", 1)
            if attribute == "age":
                low, high = (float(v) for v in value.strip("(]").split(", "))
                mine.append("1" if low < row["age"] <= high else "0")
            else:
                mine.append("1" if row[attribute] == value else "0")
        hits += tuple(mine) == vector
    return hits


@pytest.mark.parametrize("seed", range(6))
def test_exact_class_figures_equal_a_brute_force_count(seed):
    table = _table(seed, 60 + 20 * seed)
    released, names = _release(table, seed)
    k = 2 + seed % 4
    rows = [tuple(r) for r in released[names].itertuples(index=False)]
    size = Counter(rows)
    targets = defaultdict(set)
    for vector, label in zip(rows, released["y"], strict=True):
        targets[vector].add(label)
    below = [v for v, s in size.items() if s < k]
    for model in (KAnonymity(k), KAnonymityByContainment(k)):
        requirement = Requirement(QIS, (model,))
        certificate = verify_tables(
            {"release": released}, requirement, VerifyOptions(original=table)
        )
        (checked,) = certificate.tables
        figures = checked.feature_classes
        assert checked.quasi_identifiers == tuple(names)
        assert checked.measures["k"] == figures["k"] == min(size.values())
        assert figures["n_classes"] == checked.risk.n_classes == len(size)
        assert figures["single_row_classes"] == sum(s == 1 for s in size.values())
        assert figures["below_k_classes"] == len(below)
        assert figures["below_k_rows"] == sum(size[v] for v in below)
        assert figures["below_k_one_value"] == {
            "y": sum(len(targets[v]) == 1 for v in below)
        }
        assert checked.risk.prosecutor_max == pytest.approx(1 / min(size.values()))
        # journalist risk: the raw population records of each feature vector
        population = {v: _population_count(table, names, v) for v in size}
        assert checked.risk.classes_not_in_population == 0
        assert checked.risk.journalist_max == pytest.approx(
            1 / min(population.values())
        )
        if model.name == "k-anonymity":
            assert figures["attacker"] is None
            assert certificate.passed == (min(size.values()) >= k)
        else:
            bits = released[names].to_numpy() == "1"
            ac = int(containment_brute_force(bits).min())
            assert certificate.release_results[0].achieved == ac
            assert certificate.passed == (ac >= k)
            assert "knows only which of the released features" in figures["attacker"]
            assert "knows only which" in checked.to_dict()["notes"][-1]


def test_default_release_is_k_anonymous_over_its_feature_vectors():
    """The algorithm's default guarantee is the one the exact classes show."""
    table = _table(11, 400).assign(
        age=lambda t: pd.cut(t["age"], [17, 30, 45, 70]).astype(str)
    )
    spec = AnonymizationSpec(Requirement.of(QIS, k=8), "y")
    release = FsAnonymity().anonymize(table, spec, np.random.default_rng(0))
    published = pd.read_csv(
        io.BytesIO(table_to_csv_bytes(release.table)), dtype=str, keep_default_na=False
    )
    certificate = verify_tables({"release": published}, spec.requirement)
    assert certificate.passed, certificate.summary()
    features = release.evidence["selected_features"]
    smallest = published.groupby(features).size().min()
    assert certificate.tables[0].measures["k"] == smallest >= 8
    # the same features under containment keep at least as many
    contained = FsAnonymity(criterion="containment")
    requirement = contained.adapt_requirement(spec.requirement, target="y")
    wider = contained.anonymize(
        table, AnonymizationSpec(requirement, "y"), np.random.default_rng(0)
    )
    assert len(wider.evidence["selected_features"]) >= len(features)


def test_report_counts_the_classes_of_the_released_features():
    table = _table(3, 120)
    released, names = _release(table, 3)
    spec = AnonymizationSpec(Requirement.of(QIS, k=4), "y")
    utility = build_utility(table, {"release": released}, spec, None, {})
    loss = utility["tables"]["release"]
    size = Counter(tuple(r) for r in released[names].itertuples(index=False))
    assert loss["class_columns"] == names
    assert loss["equivalence_classes"] == len(size)
    assert loss["min_class_size"] == min(size.values())
    assert sum(c for _, c in loss["class_size_distribution"]) == len(size)
