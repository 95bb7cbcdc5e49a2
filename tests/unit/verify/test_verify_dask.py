"""The Dask out-of-core verifier gives the in-memory verifier's certificate."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ppdm.exceptions import InvalidParameterError, SourceError
from ppdm.privacy import Requirement
from ppdm.privacy.measures import ClassPartition
from ppdm.release.data_files import released_text
from ppdm.verify import VerifyOptions, read_released_table, verify_tables
from ppdm.verify.out_of_core import _partition_from_counts, verify_parquet

QI = ("age", "zip", "sex")


def make_release(rng: np.random.Generator, n: int = 3000) -> pd.DataFrame:
    age = rng.choice(["[17, 25]", "[26, 40]", "[41, 90]", "*"], n)
    zip_ = rng.choice(["130**", "148**", "*", None], n, p=[0.45, 0.45, 0.05, 0.05])
    sex = rng.choice(["Male", "Female"], n)
    salary = rng.choice(["10", "20", "30", "45", "60"], n)
    disease = rng.choice(["flu", "cold", "hiv", None], n, p=[0.5, 0.3, 0.15, 0.05])
    return pd.DataFrame(
        {"age": age, "zip": zip_, "sex": sex, "salary": salary, "disease": disease}
    )


@pytest.fixture(scope="module")
def release(tmp_path_factory):
    table = make_release(np.random.default_rng(11))
    root = tmp_path_factory.mktemp("parquet")
    parts = root / "release"
    parts.mkdir()
    for i, chunk in enumerate(np.array_split(np.arange(len(table)), 4)):
        table.iloc[chunk].to_parquet(parts / f"part-{i}.parquet", index=False)
    csv = root / "release.csv"
    released_text(table).to_csv(csv, index=False)
    return table, parts, csv


REQUIREMENTS = [
    Requirement.of(QI, "disease", k=20, l=2, l_variant="recursive", c=3.0, t=0.2),
    Requirement.of(QI, "salary", k=5, l=3, l_variant="entropy", t=0.1),
]


@pytest.fixture(scope="module")
def dask_certificates(release):
    """One local cluster (1 worker process, 1 GB) for both requirements."""
    from distributed import Client, LocalCluster

    _, parts, _ = release
    population = pd.DataFrame(
        {"age": np.arange(17, 91).repeat(50), "zip": "13000", "sex": "Male"}
    )
    with (
        LocalCluster(
            n_workers=1,
            threads_per_worker=2,
            memory_limit="1GB",
            dashboard_address=None,
        ) as cluster,
        Client(cluster) as client,
    ):
        certs = [
            verify_parquet(
                parts,
                REQUIREMENTS[0],
                VerifyOptions(original=population),
                engine="dask",
                client=client,
            ),
            verify_parquet(parts, REQUIREMENTS[1], engine="dask", client=client),
        ]
    return certs, population


def test_dask_path_equals_in_memory_paths(release, dask_certificates):
    table, parts, csv = release
    certs, population = dask_certificates
    for req, cert in zip(REQUIREMENTS, certs):
        population_of = population if req is REQUIREMENTS[0] else None
        options = VerifyOptions(original=population_of)
        in_memory = verify_parquet(parts, req, options, engine="pandas")
        assert cert.to_json() == in_memory.to_json()
        csv_table = read_released_table(csv)
        from_csv = verify_tables({"release": csv_table}, req, options)
        dask_dict = cert.tables[0].to_dict()
        csv_dict = from_csv.tables[0].to_dict()
        dask_dict.pop("sha256"), csv_dict.pop("sha256")
        assert dask_dict == csv_dict
    # the figures are not trivial: something fails, something passes
    first = certs[0].tables[0]
    assert first.measures["t_ordered"] is False
    assert certs[1].tables[0].measures["t_ordered"] is True
    assert first.risk.marketer is not None
    assert not certs[0].passed


def test_partition_from_counts_matches_rows(release):
    table, _, _ = release
    text = released_text(table)
    counts = text.groupby([*QI, "disease"], dropna=False).size()
    from_counts = _partition_from_counts(counts, QI, "disease")
    direct = ClassPartition.of(text, QI)
    assert sorted(from_counts.sizes) == sorted(direct.sizes)
    a, b = from_counts.sensitive("disease"), direct.sensitive("disease")
    assert sorted(a.distinct_per_class()) == sorted(b.distinct_per_class())
    assert a.emd_per_class().max() == pytest.approx(b.emd_per_class().max(), abs=1e-15)
    no_sa = _partition_from_counts(text.groupby(list(QI)).size(), QI, None)
    assert sorted(no_sa.sizes) == sorted(direct.sizes)


def test_released_text_reads_like_the_csv(release):
    table, _, csv = release
    text = released_text(table)
    assert text.equals(read_released_table(csv))
    assert (text["zip"] == "").sum() == table["zip"].isna().sum()


def test_auto_engine_and_errors(release, tmp_path):
    _, parts, _ = release
    cert = verify_parquet(parts, REQUIREMENTS[1], engine="auto")  # small: pandas
    assert cert.tables[0].name == "release"
    single = tmp_path / "one.parquet"
    pd.DataFrame({"age": ["1", "1"], "zip": ["a", "a"]}).to_parquet(single)
    one = verify_parquet(single, Requirement.of(("age", "zip", "sex"), None, k=2))
    assert one.passed and one.tables[0].missing_quasi_identifiers == ("sex",)
    with pytest.raises(InvalidParameterError, match="engine"):
        verify_parquet(parts, REQUIREMENTS[1], engine="spark")
    with pytest.raises(SourceError, match="nowhere"):
        verify_parquet(tmp_path / "nowhere", REQUIREMENTS[1])
    empty_dir = tmp_path / "empty"
    empty_dir.mkdir()
    with pytest.raises(SourceError, match="no .parquet files"):
        verify_parquet(empty_dir, REQUIREMENTS[1])
