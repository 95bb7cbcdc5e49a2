"""The policy consistent across three German releases: the same classes, month after month."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from ppdm import pipeline
from ppdm.config import default_config
from ppdm.prepare import datasets
from ppdm.verify.certificate import read_released_table
from ppdm.verify.differencing import check_against
from ppdm.verify.release_check import check_release


def _months() -> list[pd.DataFrame]:
    whole = datasets.load("german")
    first = whole.sample(frac=0.9, random_state=3).sort_index()
    third = whole.drop(whole.sample(frac=0.05, random_state=4).index)
    return [first, whole, third]


def _config(tmp_path: Path, month: int, frame: pd.DataFrame, algorithm: str):
    source = tmp_path / f"month-{month}.csv"
    frame.to_csv(source, index=False)
    return default_config("german").with_overrides(
        source={"kind": "csv", "path": str(source)},
        output_dir=str(tmp_path / "out"),
        work_dir=str(tmp_path / "work"),
        k=5,
        l=2,
        algorithm=algorithm,
        republication={"policy": "consistent"},
    )


def _table(release_dir: Path) -> pd.DataFrame:
    (path,) = (release_dir / "data").glob("*.csv")
    return read_released_table(path)


@pytest.mark.parametrize(
    "algorithm", ["mondrian", pytest.param("lattice-optimal", marks=pytest.mark.slow)]
)
def test_consistent_keeps_the_classes_and_leaves_no_leak(tmp_path, algorithm):
    configs = [
        _config(tmp_path, m, frame, algorithm)
        for m, frame in enumerate(_months(), start=1)
    ]
    dirs = [pipeline.run_release(c).release_dir for c in configs]
    requirement = configs[0].requirement
    qis = list(requirement.quasi_identifiers)
    tables = [_table(d) for d in dirs]
    for later in (1, 2):
        # Nearly every class of a month is a class of the month before.
        before = set(map(tuple, tables[later - 1][qis].drop_duplicates().to_numpy()))
        now = set(map(tuple, tables[later][qis].drop_duplicates().to_numpy()))
        assert len(now & before) >= 0.9 * len(now)
        for earlier in range(later):
            results = check_against(
                {"release": tables[later]},
                {"release": tables[earlier]},
                requirement,
                against=dirs[earlier].name,
            )
            assert not any(r.leaks for r in results)
        assert check_release(dirs[later]).passed
        certificate = json.loads((dirs[later] / "verification.json").read_text())
        assert certificate["passed"]
