"""Hold-back on small tables: what a leaking class becomes, and what never leaves.

A leaking class is released as it was in the latest earlier release only when
those rows are rows of the candidate's class and the requirement accepts
them; otherwise it is withheld. An earlier release published out of core,
in Parquet parts, is read and held back against like one in CSV form.
"""

from __future__ import annotations

from collections import Counter

import pandas as pd
import pytest

from ppdm.exceptions import ArtifactIntegrityError
from ppdm.privacy import Requirement
from ppdm.release import audit
from ppdm.release.artifacts import ArtifactStore, sha256_file
from ppdm.release.data_files import (
    put_released_table,
    read_released_table,
    write_released_part,
)
from ppdm.release.series import earlier_releases, hold_back, load_tables
from ppdm.steps.republication import RepublicationSettings, republication_step
from ppdm.verify.differencing import check_against

QIS = ("age", "sex")
DX = ["flu", "cold", "hiv", "ulcer"]


def _class(age: str, sex: str, dx: list[str]) -> pd.DataFrame:
    return pd.DataFrame({"age": age, "sex": sex, "dx": dx})


def _rows(table: pd.DataFrame) -> Counter:
    return Counter(map(tuple, table.astype(str).to_numpy().tolist()))


def _sizes(table: pd.DataFrame) -> list[int]:
    return sorted(table.groupby(list(QIS)).size().tolist())


def test_an_earlier_class_smaller_than_this_k_is_withheld_not_copied():
    # Released at k = 5: 5 rows of [20, 30) F. Now at k = 10 the same class
    # holds them and 5 more; the 5 added rows leak. Copying the earlier class
    # "as it was" would release a class of 5 in a 10-anonymous release.
    earlier = pd.concat([_class("[20, 30)", "F", (DX * 2)[:5])])
    candidate = pd.concat(
        [
            _class("[20, 30)", "F", (DX * 3)[:10]),
            _class("[30, 40)", "M", (DX * 3)[:12]),
        ],
        ignore_index=True,
    )
    requirement = Requirement.of(QIS, "dx", k=10)
    (out,), held = _held(candidate, earlier, requirement)
    assert _sizes(out) == [12]  # the leaking class withheld, the other kept
    assert held.held_back["release"] == 10 and held.kept["release"] == 0
    assert all(r.passed for r in requirement.check(out))


def test_departed_rows_are_never_published_again():
    # 12 rows were released; 2 of them left. Releasing the class as before
    # would publish the 2 rows that are no longer in the table.
    earlier = _class("[20, 30)", "F", (DX * 3)[:12])
    candidate = pd.concat(
        [earlier.iloc[2:], _class("[30, 40)", "M", (DX * 3)[:12])], ignore_index=True
    )
    requirement = Requirement.of(QIS, "dx", k=10)
    (out,), held = _held(candidate, earlier, requirement)
    assert not _rows(out) - _rows(candidate)
    assert _sizes(out) == [12] and held.kept["release"] == 0
    (result,) = check_against({"release": out}, {"release": earlier}, requirement,
                              against="m1")  # fmt: skip
    assert not result.leaks


def test_a_class_that_lost_a_member_withholds_enough_more_to_hide_who_left():
    # 8 rows released; one (flu) left. Subtracting would show one leaver with
    # flu: 2 more rows are withheld (a value other than flu first), so the
    # rows missing are 3 with 2 values, and the 5 released are still a class.
    dx = ["flu", "cold", "hiv", "flu", "cold", "hiv", "ulcer", "flu"]
    earlier = _class("[20, 30)", "F", dx)
    candidate = pd.concat(
        [earlier.iloc[1:], _class("[30, 40)", "M", DX)], ignore_index=True
    )
    requirement = Requirement.of(QIS, "dx", k=3, l=2)
    (out,), held = _held(candidate, earlier, requirement)
    assert not _rows(out) - _rows(candidate)
    assert _sizes(out) == [4, 5] and held.held_back["release"] == 2
    (result,) = check_against({"release": out}, {"release": earlier}, requirement,
                              against="m1")  # fmt: skip
    assert not result.leaks
    assert all(r.passed for r in requirement.check(out))


def test_newcomers_wait_when_the_earlier_class_is_still_whole():
    # 5 released rows are all still there and 2 joined (fewer than k = 3):
    # the class is released as before and the 2 wait.
    earlier = _class("[20, 30)", "F", ["flu", "cold", "hiv", "flu", "cold"])
    candidate = pd.concat(
        [earlier, _class("[20, 30)", "F", ["hiv", "ulcer"])], ignore_index=True
    )
    requirement = Requirement.of(QIS, "dx", k=3, l=2)
    (out,), held = _held(candidate, earlier, requirement)
    assert _rows(out) == _rows(earlier)
    assert held.held_back["release"] == 2 and held.classes["release"] == 1


def _held(candidate, earlier, requirement):
    tables, held = hold_back(
        {"release": candidate}, [("m1", {"release": earlier})], requirement
    )
    return tuple(tables.values()), held


def test_an_earlier_release_in_parts_is_read_and_held_back_against(tmp_path):
    # The earlier release was published out of core: its 5 rows of [20, 30) F
    # in two Parquet parts. At k = 10 the candidate's class of 10 leaks
    # against it exactly as against the same release in CSV form.
    out = tmp_path / "out"
    release_dir = "clinic/0a1b2c3d4e5f6789"
    earlier = _class("[20, 30)", "F", (DX * 2)[:5])
    records = []
    for i, rows in enumerate((earlier.iloc[:3], earlier.iloc[3:])):
        rel = f"{release_dir}/data/release/part-{i:05d}.parquet"
        write_released_part(rows, out / rel)
        records.append({"path": rel, "sha256": sha256_file(out / rel)})
    audit.append_entry(
        out / audit.AUDIT_LOG_NAME,
        {
            "event": "publish",
            "dataset": "clinic",
            "release_dir": release_dir,
            "release_id": "0a1b2c3d4e5f6789",
            "source_sha256": "ab" * 32,
            "files": [
                {"path": f"{release_dir}/manifest.json", "sha256": "0" * 64},
                *records,
            ],
        },
    )
    (found,) = earlier_releases(out, "clinic")
    assert found.files == {} and len(found.partitioned) == 2
    assert _rows(load_tables(found)["release"]) == _rows(earlier)
    store = ArtifactStore(tmp_path / "work")
    candidate = pd.concat(
        [
            _class("[20, 30)", "F", (DX * 3)[:10]),
            _class("[30, 40)", "M", (DX * 3)[:12]),
        ],
        ignore_index=True,
    )
    settings = RepublicationSettings(
        dataset="clinic",
        requirement=Requirement.of(QIS, "dx", k=10),
        series=[found.to_dict()],
    )
    released = republication_step(
        settings, store, {"release": put_released_table(store, candidate)}
    )
    assert released.summary["against"] == ["0a1b2c3d4e5f6789"]
    assert released.summary["rows_held_back"] == 10
    path = released.tables["release"].path
    assert _sizes(read_released_table(path)) == [12]
    # A part changed since it was published is refused, never read.
    write_released_part(earlier.iloc[:2], out / records[0]["path"])
    with pytest.raises(ArtifactIntegrityError, match="part-00000.parquet"):
        load_tables(found)
