"""Fuzzing the configuration file: wrong types, unknown keys and names, broken files.

Every case is German's shipped configuration, written as YAML with one
change, and read by :func:`ppdm.config.load_config` as ``ppdm run --config``
reads it. A value of the wrong type is never taken for another (no ``k:
true`` as k = 1, no ``k: "10"``), an unknown key or name is refused naming
it, and a file that is not a configuration says why, naming the file.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from fuzz_cases import config_data, fresh_dir, fuzz, judge, yaml_text
from hypothesis import given
from hypothesis import strategies as st

from ppdm.algorithms import ALGORITHMS
from ppdm.config import load_config

INTEGERS = ["k", "l", "seed", "discretize.n_bins"]
NUMBERS = [
    "suppression_limit",
    "t",
    "validation.max_rejected_fraction",
    "utility.test_size",
    "verification.size_threshold_mb",
    "passthrough.max_proxy_share",
]
CHOICES = [
    "l_variant",
    "discretize.method",
    "verification.engine",
    "source.kind",
    "algorithm",
]

#: Values no integer key may take: booleans, quoted numbers, fractions, huge,
#: negative and non-finite numbers, containers, nothing.
NOT_AN_INTEGER = st.sampled_from(
    [True, False, "10", "5", "0", 1.5, 10.0, 10**30, -(10**30), -1, math.nan,
     math.inf, [5], {"value": 5}, None, "", "five"]
)  # fmt: skip
NOT_A_NUMBER = st.sampled_from(  # (None is t's default: t-closeness not asked)
    [True, False, "0.1", "", math.nan, math.inf, -math.inf, -0.5, [0.1], {}]
)
#: Names that no choice key accepts (the registered ones are filtered out).
WORDS = st.text(
    st.characters(codec="utf-8", exclude_categories=["Cs", "Cc"]),
    min_size=0,
    max_size=12,
).filter(lambda w: w not in ALGORITHMS and w.strip() not in ("mdl", "none", "csv"))


@pytest.fixture(scope="module")
def root(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("fuzz-config")


def _set(data: dict, dotted: str, value) -> None:
    *parents, leaf = dotted.split(".")
    for key in parents:
        data = data.setdefault(key, {})
    data[leaf] = value


def _run(root: Path, spoiled: str, write, names=()):
    case = fresh_dir(root)
    path = case / "release.yaml"
    data = config_data(case, {"kind": "embedded", "name": "german"})
    write(path, data)
    return judge(
        "config",
        spoiled,
        lambda: load_config(path),
        [str(path), *names],
        case / "out",
    )


def _changed(dotted: str, value):
    def write(path: Path, data: dict) -> None:
        _set(data, dotted, value)
        path.write_text(yaml_text(data), encoding="utf-8")

    return write


@fuzz(24)
@given(key=st.sampled_from(INTEGERS), value=NOT_AN_INTEGER)
def test_integer_keys_take_integers_only(root, key, value):
    outcome = _run(root, "wrong type", _changed(key, value), [key.split(".")[-1]])
    assert outcome.error is not None


@fuzz(20)
@given(key=st.sampled_from(NUMBERS), value=NOT_A_NUMBER)
def test_number_keys_take_numbers_only(root, key, value):
    outcome = _run(root, "wrong type", _changed(key, value), [key.split(".")[-1]])
    assert outcome.error is not None


@fuzz(12)
@given(key=st.sampled_from(CHOICES), word=WORDS)
def test_unknown_names_of_choices(root, key, word):
    outcome = _run(root, "unknown name", _changed(key, word), [key.split(".")[-1]])
    assert outcome.error is not None


@fuzz(8)
@given(
    where=st.sampled_from(["", "discretize.", "source.", "validation.", "utility."]),
    name=st.from_regex(r"[a-z][a-z_]{0,10}", fullmatch=True),
)
def test_unknown_keys(root, where, name):
    def write(path: Path, data: dict) -> None:
        parent = data
        for part in where.strip(".").split(".") if where else []:
            parent = parent[part]
        if name in parent or (not where and name in {"schema", "models"}):
            parent[name + "_x"] = 1
        else:
            parent[name] = 1
        path.write_text(yaml_text(data), encoding="utf-8")

    outcome = _run(root, "unknown key", write, [name])
    assert outcome.error is not None


@fuzz(10)
@given(
    algorithm=st.sampled_from(sorted(ALGORITHMS)),
    name=st.sampled_from(["split", "inducer", "population", "loss", "depth", ""]),
    value=st.sampled_from(["nope", -3, True, None, [1], 1.5]),
)
def test_algorithm_parameters(root, algorithm, name, value):
    def write(path: Path, data: dict) -> None:
        data.update(algorithm=algorithm, params={name: value})
        path.write_text(yaml_text(data), encoding="utf-8")

    outcome = _run(root, "algorithm parameters", write, [name or "''", algorithm])
    assert outcome.error is not None


@fuzz(10)
@given(
    key=st.sampled_from(["quasi_identifiers", "target", "sensitive_attribute"]),
    value=st.sampled_from(["zip", "", [], ["age", "age"], ["zip"], 7, {"a": 1}]),
)
def test_role_keys_that_name_no_column(root, key, value):
    outcome = _run(root, "unknown column", _changed(key, value), [key, "zip"])
    assert outcome.error is not None


@fuzz(8)
@given(key=st.sampled_from(["k", "l", "seed", "algorithm", "columns", "discretize"]))
def test_a_key_given_twice(root, key):
    def write(path: Path, data: dict) -> None:
        again = yaml_text({key: data[key]})
        path.write_text(yaml_text(data) + again, encoding="utf-8")

    outcome = _run(root, "duplicate key", write, [f"key {key!r} is given twice"])
    assert outcome.error is not None


FILES = {
    "latin-1": lambda text: ("# café\n" + text).encode("latin-1"),
    "UTF-16 with BOM": lambda text: text.encode("utf-16"),
    "binary": lambda text: bytes(range(256)),
    "empty": lambda text: b"",
    "a list": lambda text: b"- dataset\n- german\n",
    "tab indentation": lambda text: text.replace("  ", "\t").encode(),
    "two documents": lambda text: (text + "---\n" + text).encode(),
    "unclosed quote": lambda text: (text + 'target: "credit\n').encode(),
}


@fuzz(10)
@given(how=st.sampled_from([*FILES, "a directory"]))
def test_files_that_are_not_configurations(root, how):
    def write(path: Path, data: dict) -> None:
        if how == "a directory":
            path.mkdir()
        else:
            path.write_bytes(FILES[how](yaml_text(data)))

    outcome = _run(root, "unreadable file", write)
    assert outcome.error is not None
