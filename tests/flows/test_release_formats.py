"""Every format a release is published in, read back by every reader of a release.

German is released by Mondrian in process on each engine: the pandas engine
publishes ``data/release.csv``, the Dask engine ``data/release/part-*.parquet``.
Each release is then read by the notebook reader, ``ppdm verify`` (in memory
and out of core), ``ppdm audit verify``, the release series (the earlier
releases a new run is checked against) and a later in-memory release of the
dataset that holds back against it. Both formats must read as the same rows.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from ppdm import pipeline
from ppdm.config import default_config
from ppdm.flows.cli import EXIT_OK, main
from ppdm.prepare.datasets import load
from ppdm.release.audit import verify_audit_log
from ppdm.release.data_files import read_release, release_data
from ppdm.release.series import earlier_releases, load_tables
from ppdm.verify import release_check
from ppdm.verify.release_check import check_release

# A local Dask cluster for the out-of-core release and verifier: long.
pytestmark = pytest.mark.slow

ENGINES = ("pandas", "dask")
KEY = "env:PPDM_AUDIT_KEY"  # set for the whole suite (tests/conftest.py)


#: Small parts (German's 1,000 rows in six), one worker of one thread.
COMPUTE = {
    "partition_rows": 170,
    "workers": 1,
    "threads_per_worker": 1,
    "memory_limit": "1GB",
    "sample_rows": 1_000,
}


def _config(source: Path, root: Path, engine: str):
    return default_config("german").with_overrides(
        source={"kind": "csv", "path": str(source)},
        algorithm="mondrian",
        compute={**COMPUTE, "engine": engine},
        output_dir=str(root / "out"),
        work_dir=str(root / "work"),
    )


@pytest.fixture(scope="module")
def published(tmp_path_factory) -> dict[str, Path]:
    """The source, and the release directory of each engine in an output directory of its own."""
    found = {"source": tmp_path_factory.mktemp("source") / "german.csv"}
    load("german").to_csv(found["source"], index=False)
    for engine in ENGINES:
        config = _config(found["source"], tmp_path_factory.mktemp(engine), engine)
        found[engine] = pipeline.run_release(config).release_dir
    return found


def _sorted(table: pd.DataFrame) -> pd.DataFrame:
    return table.sort_values(list(table.columns), ignore_index=True)


def _manifest(release_dir: Path) -> dict:
    return json.loads((release_dir / "manifest.json").read_text())


def test_each_engine_publishes_its_format(published):
    csv = [f["path"] for f in _manifest(published["pandas"])["files"]]
    parts = [f["path"] for f in _manifest(published["dask"])["files"]]
    assert csv == ["data/release.csv"]
    assert parts == [f"data/release/part-{i:05d}.parquet" for i in range(6)]


def test_both_formats_read_as_the_same_rows(published):
    # The two engines shuffle differently; the rows released are the same.
    tables = {engine: read_release(published[engine]) for engine in ENGINES}
    assert all(list(t) == ["release"] for t in tables.values())
    in_memory, out_of_core = (tables[e]["release"] for e in ENGINES)
    assert len(in_memory) == 1_000
    # Every cell as text, in either format: a Parquet part reads as its CSV would.
    for table in (in_memory, out_of_core):
        assert all(isinstance(v, str) for v in table.to_numpy().ravel())
    pd.testing.assert_frame_equal(_sorted(out_of_core), _sorted(in_memory))


@pytest.mark.parametrize("engine", ENGINES)
def test_verify_in_memory_and_out_of_core_agree(published, engine, monkeypatch):
    release_dir = published[engine]
    in_memory = check_release(release_dir, key=KEY)
    # A release above the threshold is verified out of core, whatever its format.
    monkeypatch.setattr(release_check, "DASK_THRESHOLD_BYTES", 0)
    out_of_core = check_release(release_dir, key=KEY)
    assert in_memory.passed and out_of_core.passed
    # The same figures, line for line, whichever verifier read the files.
    assert out_of_core.lines == in_memory.lines and in_memory.lines[-1] == "PASS"
    (k,) = [line for line in in_memory.lines if line.startswith("check k-anonymity")]
    assert k.startswith("check k-anonymity on release:") and "achieved k = " in k
    # The out-of-core reader saw the table in its published format.
    data = release_data(release_dir, _manifest(release_dir))
    assert list(data) == ["release"]


@pytest.mark.parametrize("engine", ENGINES)
def test_audit_verify_checks_every_data_file(published, engine, capsys):
    out = published[engine].parent.parent
    report = verify_audit_log(out, key=KEY)
    assert report.broken is None
    # Every data file, the six artifacts beside them and the manifest.
    files = len(_manifest(published[engine])["files"])
    assert report.files_checked == files + 7
    assert main(["audit", "verify", "--out", str(out)]) == EXIT_OK
    capsys.readouterr()


@pytest.mark.parametrize("engine", ENGINES)
def test_a_later_release_reads_the_earlier_one_in_its_format(
    published, engine, tmp_path
):
    earlier = published[engine]
    root = tmp_path / "series"
    shutil.copytree(earlier.parent.parent, root / "out")
    for path in (root / "out").rglob("*"):  # published files are read-only
        path.chmod(path.stat().st_mode | 0o200)
    # The series reads the earlier release from the audit log, parts and all,
    # as the notebook reader reads it.
    (found,) = earlier_releases(root / "out", "german")
    assert found.release_id == earlier.name
    tables = load_tables(found)
    expected = read_release(earlier, current_labels=True)
    pd.testing.assert_frame_equal(tables["release"], expected["release"])

    # 40 persons left: the next release (in memory) is held back against the
    # earlier one and verified against it.
    source = tmp_path / "german-next.csv"
    pd.read_csv(published["source"]).iloc[40:].to_csv(source, index=False)
    later = pipeline.run_release(_config(source, root, "pandas")).release_dir
    assert later != earlier
    certificate = json.loads((later / "verification.json").read_text())
    assert certificate["series"]["checked_against"] == [earlier.name]
    checked = check_release(later, key=KEY)
    assert checked.passed
    assert any(
        line.startswith(f"series: release against release {earlier.name}:")
        for line in checked.lines
    )
