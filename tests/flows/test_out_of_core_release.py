"""The Dask engine releases the same rows, with the same verdict, as the pandas engine.

A CSV source is cut into several small partitions; every step then runs one
partition at a time on a local Dask cluster. For each algorithm that runs on
the frequency table, the published rows (sorted: the two engines shuffle
differently) and the certificate's findings equal the in-memory release's.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from ppdm import pipeline
from ppdm.config import ConfigError, default_config
from ppdm.flows.cli import EXIT_FAILED, EXIT_OK, EXIT_UNSEALED, main
from ppdm.prepare.datasets import load
from ppdm.release.artifacts import sha256_file
from ppdm.release.data_files import read_released_table, released_tables

# Long end-to-end checks (a local Dask cluster, German released by three algorithms
# with both engines): .ci/run runs them after the README's command.
pytestmark = pytest.mark.slow

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
        compute={
            "engine": engine,
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
    """The published rows as text, in a canonical order (CSV or Parquet parts)."""
    manifest = json.loads((release_dir / "manifest.json").read_text())
    (files,) = released_tables(f["path"] for f in manifest["files"]).values()
    table = read_released_table([release_dir / f for f in files])
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
    first = read_released_table(parts[0])
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


# -- every reader of a published release, on each engine's release -------------
ENGINES = ("pandas", "dask")


@pytest.mark.parametrize("engine", ENGINES)
def test_every_reader_reads_the_release_of_each_engine(releases, engine, capsys):
    release_dir = releases[engine, "mondrian"]
    other = releases[next(e for e in ENGINES if e != engine), "mondrian"]
    assert main(["verify", str(release_dir)]) == EXIT_OK
    shown = capsys.readouterr().out
    # One table, whatever the number of parts, and the seal checked.
    assert shown.count("check k-anonymity on ") == 1
    assert "check k-anonymity on release: required k = 5; achieved k = " in shown
    assert "seal OK: manifest.json sealed" in shown
    assert shown.splitlines()[-1] == "PASS"
    assert main(["show", str(release_dir)]) == EXIT_OK
    shown = capsys.readouterr().out
    assert "  verdict      PASSED\n" in shown and "  seal         OK:" in shown
    # Compared with the other engine's release of the same rows: nothing
    # leaks by differencing, and each side is read in its own format.
    assert main(["verify", str(release_dir), "--against", str(other)]) == EXIT_OK
    shown = capsys.readouterr().out
    assert (
        f"series: release against release {other.name}: " in shown
        and "0 rows added, 0 removed" in shown
    )
    # Achieved t is in the certificate though no t is required.
    measures = _certificate(release_dir)["tables"]["release"]["measures"]
    assert 0 < measures["t"] < 1 and measures["t_ordered"] is False


@pytest.mark.parametrize("engine", ENGINES)
def test_a_consistent_tamper_fails_verify_and_show_naming_what_changed(
    releases, engine, tmp_path, capsys, monkeypatch
):
    published = releases[engine, "mondrian"]
    out = tmp_path / "out"
    shutil.copytree(published.parent.parent, out)
    for path in out.rglob("*"):  # published files are read-only
        path.chmod(path.stat().st_mode | 0o200)
    release_dir = out / published.parent.name / published.name
    manifest = json.loads((release_dir / "manifest.json").read_text())
    record = manifest["files"][0]
    data = release_dir / record["path"]
    # A released row edited outside the quasi-identifiers (k and l still
    # hold), its sha256 fixed in manifest.json and k set to 1 there.
    table = read_released_table(data)
    table.loc[0, "credit-amount"] = "99999"
    if data.suffix == ".parquet":
        table.to_parquet(data, index=False)
    else:
        table.to_csv(data, index=False)
    record["sha256"] = sha256_file(data)
    manifest["requirement"]["models"][0]["k"] = 1
    (release_dir / "manifest.json").write_text(json.dumps(manifest))

    assert main(["verify", str(release_dir)]) == EXIT_FAILED
    captured = capsys.readouterr()
    assert "FAIL: manifest.json does not match its audit seal" in captured.out
    assert "manifest.json requires 1-anonymity" in captured.out
    assert f"FAIL: {record['path']} changed since it was published" in captured.out
    assert captured.out.splitlines()[-1] == "FAIL"
    assert captured.err == (
        f"ppdm verify: {release_dir}: manifest.json does not match its audit "
        "seal (edited, or sealed without the key)\n"
    )
    assert main(["show", str(release_dir)]) == EXIT_FAILED
    captured = capsys.readouterr()
    assert "  verdict      FAILED, not as published: manifest.json" in captured.out
    assert f"{record['path']} changed since it was published" in captured.err

    # Without a key every other check passes: both say the seal was not
    # checked, and exit 5, not 0.
    monkeypatch.delenv("PPDM_AUDIT_KEY")
    assert main(["verify", str(release_dir)]) == EXIT_UNSEALED
    shown = capsys.readouterr().out
    assert "seal NOT CHECKED: no audit key at hand" in shown
    assert shown.splitlines()[-1] == "PASS, but the seal was NOT CHECKED"
    assert main(["show", str(release_dir)]) == EXIT_UNSEALED
    shown = capsys.readouterr().out
    assert "  verdict      PASSED (seal not checked: no audit key at hand)" in shown
