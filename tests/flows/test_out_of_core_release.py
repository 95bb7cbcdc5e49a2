"""The Dask engine releases the same rows, with the same verdict, as the pandas engine.

A CSV source is cut into several small partitions; every step then runs one
partition at a time on a local Dask cluster. For each algorithm that runs on
the frequency table, the published rows (sorted: the two engines shuffle
differently) and the certificate's findings equal the in-memory release's.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from ppdm import pipeline
from ppdm.config import ConfigError, default_config
from ppdm.prepare.datasets import load
from ppdm.verify import read_released_table
from ppdm.verify.out_of_core import released_text

ALGORITHMS = ("mondrian", "lattice-optimal", "pbg-ea")


@pytest.fixture(scope="module")
def german_csv(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("source") / "german.csv"
    load("german").to_csv(path, index=False)
    return path


@pytest.fixture(scope="module")
def scheduler():
    """An existing Dask scheduler the releases connect to by address."""
    from distributed import LocalCluster

    with LocalCluster(
        n_workers=1,
        threads_per_worker=2,
        processes=True,
        memory_limit="1GB",
        dashboard_address=None,
        host="127.0.0.1",
    ) as cluster:
        yield cluster.scheduler_address


def _config(source: Path, out: Path, engine: str, algorithm: str, address=None):
    base = default_config("german")
    params = {"generations": 5, "population": 8} if algorithm == "pbg-ea" else {}
    return base.with_overrides(
        source={"kind": "csv", "path": str(source)},
        algorithm=algorithm,
        params=params,
        engine=engine,
        out_of_core={
            "partition_rows": 170,
            "workers": 1,
            "threads_per_worker": 2,
            "memory_limit": "1GB",
            "sample_rows": 1_000,
            **({"address": address} if address else {}),
        },
        output_dir=str(out / f"releases-{algorithm}"),
        work_dir=str(out / "work"),
    )


@pytest.fixture(scope="module")
def releases(prefect_backend, german_csv, scheduler, tmp_path_factory):
    """Each algorithm released by the Prefect flow on both engines.

    The runs of one engine share a work directory, so the steps before the
    anonymization are served from Prefect's cache after the first algorithm.
    """
    from ppdm.flows.release import release_for

    root = tmp_path_factory.mktemp("engines")
    found = {}
    for engine in ("pandas", "dask"):
        for algorithm in ALGORITHMS:
            config = _config(german_csv, root / engine, engine, algorithm, scheduler)
            found[engine, algorithm] = Path(release_for(config)(config=config))
    return found


def _certificate(release_dir: Path) -> dict:
    return json.loads((release_dir / "verification.json").read_text())


def _released(release_dir: Path) -> pd.DataFrame:
    """The published rows as text, in a canonical order."""
    data = release_dir / "data"
    csv = data / "release.csv"
    if csv.is_file():
        table = read_released_table(csv)
    else:
        parts = sorted((data / "release").glob("part-*.parquet"))
        table = released_text(pd.concat([pd.read_parquet(p) for p in parts]))
    return table.sort_values(list(table.columns), ignore_index=True)


def _findings(certificate: dict) -> dict:
    """What the verifier found, without the file hashes (the formats differ)."""
    tables = {
        name: {
            "rows": table["rows"],
            "models": table["models"],
            "measures": table["measures"],
            "prosecutor": {
                k: v for k, v in table["risk"].items() if k.startswith("prosecutor")
            },
        }
        for name, table in certificate["tables"].items()
    }
    return {
        "passed": certificate["passed"],
        "tables": tables,
        "passthrough": certificate["passthrough"],
        "requirement": certificate["requirement"],
        "input_sha256": certificate["input_sha256"],
    }


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_dask_engine_releases_what_pandas_releases(releases, german_csv, algorithm):
    in_memory, out_of_core = releases["pandas", algorithm], releases["dask", algorithm]
    parts = sorted((out_of_core / "data" / "release").glob("*.parquet"))
    assert len(parts) == 6  # 1,000 rows in parts of 170
    pd.testing.assert_frame_equal(_released(out_of_core), _released(in_memory))
    assert _findings(_certificate(out_of_core)) == _findings(_certificate(in_memory))
    manifest = json.loads((out_of_core / "manifest.json").read_text())
    listed = [f["path"] for f in manifest["files"]]
    assert listed == [f"data/release/{p.name}" for p in parts]
    assert sum(f["rows"] for f in manifest["files"]) == len(_released(out_of_core))
    # The rows do not keep the source's order.
    first = released_text(pd.read_parquet(parts[0]))
    source = pd.read_csv(german_csv, dtype=str, keep_default_na=False)
    assert not first["credit-amount"].equals(source["credit-amount"].head(len(first)))
    report = (out_of_core / "report.html").read_text()
    assert "seeded sample" in report and "data/release/ (Parquet parts)" in report


def test_dask_engine_is_reproducible(releases, german_csv, scheduler, tmp_path):
    config = _config(german_csv, tmp_path, "dask", "mondrian", scheduler)
    again = pipeline.run_release(config).release_dir
    first = releases["dask", "mondrian"]
    assert again.name == first.name
    for a, b in zip(
        sorted((first / "data" / "release").iterdir()),
        sorted((again / "data" / "release").iterdir()),
        strict=True,
    ):
        assert a.read_bytes() == b.read_bytes()


def test_algorithms_that_need_rows_are_refused_on_the_dask_engine(german_csv, tmp_path):
    with pytest.raises((ConfigError, ValueError), match="needs the table's rows"):
        _config(german_csv, tmp_path, "dask", "kactus")
