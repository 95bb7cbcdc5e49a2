"""Hierarchies: the shipped files, the loader's checks, code tables and labels."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ppdm.exceptions import DataValidationError
from ppdm.generalization.hierarchies import Hierarchy, load_hierarchies, load_hierarchy
from ppdm.prepare import datasets

REPO = Path(__file__).resolve().parents[3]
ADULT = REPO / "hierarchies" / "adult"
GERMAN = REPO / "hierarchies" / "german"


def write_csv(path: Path, rows: list[str]) -> Path:
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


# ------------------------------------------------------------ shipped files
def test_adult_hierarchies_have_the_papers_lengths_and_cover_the_data() -> None:
    hierarchies = load_hierarchies(ADULT)
    heights = {name: h.height for name, h in hierarchies.items()}
    assert heights == {
        "age": 6, "workclass": 3, "education": 3, "marital-status": 3, "race": 1,
        "sex": 1, "native-country": 4, "income": 1,
    }  # fmt: skip
    assert np.prod([h + 1 for h in heights.values()]) == 17_920
    assert np.prod([h + 1 for n, h in heights.items() if n != "income"]) == 8_960
    adult = datasets.load("adult")
    for hierarchy in hierarchies.values():
        hierarchy.check_covers(adult)


def test_german_hierarchies_cover_the_data() -> None:
    german = datasets.load("german")
    hierarchies = load_hierarchies(GERMAN)
    assert len(hierarchies) >= 8
    for hierarchy in hierarchies.values():
        hierarchy.check_covers(german)


def test_known_generalizations_of_adult_values() -> None:
    hierarchies = load_hierarchies(ADULT)
    education = hierarchies["education"]
    column = pd.Series(["Masters", "9th", "HS-grad"], dtype="string", name="education")
    assert education.generalize(column, 1).tolist() == [
        "Graduate", "Secondary", "High-school",
    ]  # fmt: skip
    assert education.generalize(column, 2).tolist() == [
        "University", "Without-diploma", "High-school-or-college",
    ]  # fmt: skip
    assert education.generalize(column, 3).tolist() == ["*", "*", "*"]
    age = hierarchies["age"]
    ages = pd.Series([17, 37, 90], name="age")
    assert age.generalize(ages, 0).tolist() == ["17", "37", "90"]
    assert age.generalize(ages, 1).tolist() == ["[15, 20)", "[35, 40)", "[90, 95)"]
    assert age.generalize(ages, 3).tolist() == ["[0, 20)", "[20, 40)", "[80, 100)"]
    assert age.generalize(ages, 6).tolist() == ["*", "*", "*"]


def test_missing_values_are_their_own_leaf_until_the_root() -> None:
    workclass = load_hierarchies(ADULT)["workclass"]
    column = pd.Series(["Private", pd.NA], dtype="string", name="workclass")
    assert workclass.generalize(column, 0).tolist() == ["Private", ""]
    assert workclass.generalize(column, 2).tolist() == ["With-pay", ""]
    assert workclass.generalize(column, 3).tolist() == ["*", "*"]


def test_label_loss_is_leaves_under_the_label_over_the_domain() -> None:
    education = load_hierarchies(ADULT)["education"]
    level1 = dict(zip(education.labels[1], education.label_loss(1)))
    assert level1["Graduate"] == pytest.approx(2 / 15)  # 3 of 16 leaves
    assert level1["Bachelors"] == 0.0
    assert level1[""] == 0.0  # the missing leaf
    assert (education.label_loss(3) == 1.0).all()
    age = load_hierarchies(ADULT)["age"]
    level1 = dict(zip(age.labels[1], age.label_loss(1)))
    assert level1["[15, 20)"] == pytest.approx(2 / 73)  # 17..19 of 17..90
    assert level1["[35, 40)"] == pytest.approx(4 / 73)


# --------------------------------------------------------- loader errors
def test_uncovered_value_names_the_file_and_the_value(tmp_path: Path) -> None:
    path = write_csv(tmp_path / "sex.csv", ["F;*", "M;*"])
    hierarchy = load_hierarchy(path)
    table = pd.DataFrame({"sex": pd.array(["F", "X", "M"], dtype="string")})
    with pytest.raises(DataValidationError, match=r"sex\.csv.*'X'"):
        hierarchy.check_covers(table)


def test_uncovered_number_in_an_interval_hierarchy(tmp_path: Path) -> None:
    path = tmp_path / "age.json"
    path.write_text(
        json.dumps({"type": "intervals", "min": 0, "max": 9, "widths": [5]})
    )
    with pytest.raises(DataValidationError, match=r"age\.json.*'12'"):
        load_hierarchy(path).check_covers(pd.DataFrame({"age": [3, 12]}))


def test_two_roots_name_the_file_and_row(tmp_path: Path) -> None:
    path = write_csv(tmp_path / "zip.csv", ["a;x;*", "b;x;*", "c;y;ALL"])
    with pytest.raises(DataValidationError, match=r"zip\.csv, row 3: .*root"):
        load_hierarchy(path)


def test_ragged_depth_names_the_file_and_row(tmp_path: Path) -> None:
    path = write_csv(tmp_path / "zip.csv", ["a;x;*", "b;*", "c;y;*"])
    with pytest.raises(DataValidationError, match=r"zip\.csv, row 2: ragged depth"):
        load_hierarchy(path)


def test_a_label_with_two_parents_is_rejected(tmp_path: Path) -> None:
    path = write_csv(tmp_path / "zip.csv", ["a;x;p;*", "b;x;q;*", "c;y;q;*"])
    with pytest.raises(DataValidationError, match=r"zip\.csv, row 2: label 'x'"):
        load_hierarchy(path)


def test_a_duplicated_raw_value_is_rejected(tmp_path: Path) -> None:
    path = write_csv(tmp_path / "zip.csv", ["a;*", "b;*", "a;*"])
    with pytest.raises(DataValidationError, match=r"zip\.csv, row 3: .*row 1"):
        load_hierarchy(path)


def test_interval_widths_must_nest(tmp_path: Path) -> None:
    path = tmp_path / "age.json"
    path.write_text(
        json.dumps({"type": "intervals", "min": 0, "max": 99, "widths": [5, 12]})
    )
    with pytest.raises(DataValidationError, match=r"age\.json: widths\[1\]=12"):
        load_hierarchy(path)


def test_duplicate_attribute_in_a_directory(tmp_path: Path) -> None:
    write_csv(tmp_path / "age.csv", ["1;*"])
    (tmp_path / "age.json").write_text(
        json.dumps({"type": "intervals", "min": 0, "max": 9, "widths": [5]})
    )
    with pytest.raises(DataValidationError, match="already defined"):
        load_hierarchies(tmp_path)


# -------------------------------------------------------------- properties
@st.composite
def random_hierarchy(draw: st.DrawFn) -> tuple[list[list[str]], int]:
    """Rows of a valid random hierarchy: each level merges labels of the one below."""
    n_values = draw(st.integers(1, 12))
    height = draw(st.integers(1, 4))
    groups = list(range(n_values))
    columns = [[f"v{i}" for i in range(n_values)]]
    for level in range(1, height):
        n_parents = draw(st.integers(1, max(len(set(groups)), 1)))
        parent_of = {
            g: draw(st.integers(0, n_parents - 1)) for g in sorted(set(groups))
        }
        groups = [parent_of[g] for g in groups]
        columns.append([f"L{level}g{g}" for g in groups])
    columns.append(["*"] * n_values)
    return [list(row) for row in zip(*columns)], height


@given(random_hierarchy(), st.data())
@settings(max_examples=60, deadline=None)
def test_code_tables_agree_with_the_rows(
    case: tuple[list[list[str]], int], data: st.DataObject
) -> None:
    rows, height = case
    hierarchy = Hierarchy.from_rows("x", rows, source="x.csv")
    assert hierarchy.height == height
    values = data.draw(st.lists(st.sampled_from([r[0] for r in rows]), min_size=1))
    column = pd.Series(values, dtype="string", name="x")
    truth = {row[0]: row for row in rows}
    for level in range(height + 1):
        expected = [truth[v][level] for v in values]
        assert hierarchy.generalize(column, level).tolist() == expected
        # Coarsening: values equal at a level stay equal above it.
        for to_level in range(level, height + 1):
            mapped = hierarchy.parent_codes(level, to_level)[
                hierarchy.level_codes(level)
            ]
            assert (mapped == hierarchy.level_codes(to_level)).all()
        loss = hierarchy.label_loss(level)
        assert ((loss >= 0) & (loss <= 1)).all()


def test_scalar_label_lookup() -> None:
    hierarchies = load_hierarchies(ADULT)
    assert hierarchies["native-country"].label("Japan", 1) == "East-Asia"
    assert hierarchies["native-country"].label("Japan", 3) == "Eurasia"
    assert hierarchies["age"].label(44, 4) == "[40, 80)"
    assert hierarchies["sex"].label(None, 0) == ""
