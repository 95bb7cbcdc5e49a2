from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from ppdm import resources
from ppdm.config import ConfigError, default_config, load_config, parse_config
from ppdm.exceptions import UnknownDatasetError

ROOT = Path(__file__).resolve().parents[2]


_ROLE_KEYS = ("quasi_identifiers", "target", "sensitive_attribute")


def _with(**changes):
    """Adult's default config as a dict, changed; new role keys replace its roles."""
    data = default_config("adult").model_dump(by_alias=True)
    if any(key in changes for key in _ROLE_KEYS):
        del data["columns"]  # derived from the keys (no source is read here)
    data.update(changes)
    return data


@pytest.mark.parametrize(
    "name", sorted(p.name for p in (ROOT / "configs").glob("*.yaml"))
)
def test_shipped_example_configs_are_valid(name):
    config = load_config(ROOT / "configs" / name)
    assert config.quasi_identifiers and config.target


@pytest.mark.parametrize("dataset", ["adult", "german"])
def test_the_default_is_the_shipped_yaml_file(dataset):
    assert resources.config_file(dataset) == ROOT / "configs" / f"{dataset}.yaml"
    assert default_config(dataset) == load_config(ROOT / "configs" / f"{dataset}.yaml")


def _readme_defaults() -> dict:
    """The defaults as the README's "Defaults of `ppdm run`" section states them."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Defaults of `ppdm run`", 1)[1].split("```", 1)[0]
    text = " ".join(section.split())

    def one(pattern: str) -> str:
        (found,) = re.findall(pattern, text)
        return found

    return {
        "config": one(r"with `configs/([\w-]+)\.yaml`'s settings"),
        "quasi_identifiers": one(r"settings: quasi-identifiers ([^;]+);").split(", "),
        "sensitive_attribute": one(r"sensitive attribute ([\w-]+);"),
        "target": one(r"target ([\w-]+);"),
        "k": int(one(r"\bk = (\d+)")),
        "l_variant": one(r"(\w+) l = \d+"),
        "l": int(one(r"\w+ l = (\d+)")),
        "discretize": one(r"discretized with supervised (MDL)").lower(),
        "algorithm": one(r"algorithm (\w+);").lower(),
        "seed": int(one(r"seed (\d+);")),
        "output_dir": one(r"output under `([\w.-]+)/`"),
    }


def test_readme_documented_defaults():
    documented = _readme_defaults()
    assert documented["config"] == "adult"
    config = default_config("adult")
    assert {
        "quasi_identifiers": config.quasi_identifiers,
        "sensitive_attribute": config.sensitive_attribute,
        "target": config.target,
        "k": config.k,
        "l_variant": config.l_variant,
        "l": config.l,
        "discretize": config.discretize.method,
        "algorithm": config.algorithm,
        "seed": config.seed,
        "output_dir": config.output_dir,
    } == {key: value for key, value in documented.items() if key != "config"}
    # The same values, stated here as known answers.
    assert (config.k, config.l, config.algorithm, config.target) == (
        10,
        2,
        "mondrian",
        "income",
    )
    assert config.schema == "adult"
    assert config.source.kind == "embedded" and config.source.name == "adult"


def test_an_unknown_default_lists_the_shipped_ones():
    with pytest.raises(ConfigError, match="defaults ship for: adult, german$"):
        default_config("census")
    # A shipped example releasing another dataset is no dataset's default.
    assert load_config(resources.config_file("adult-pbg-ea")).dataset == "adult"
    with pytest.raises(ConfigError, match="'adult-pbg-ea'"):
        default_config("adult-pbg-ea")


PBG = {"algorithm": "pbg-ea", "params": {}}


def test_a_hierarchy_algorithm_needs_a_hierarchy_for_every_qi():
    qis = ["age", "relationship", "sex", "occupation"]
    with pytest.raises(ConfigError) as err:
        parse_config(
            _with(**PBG, quasi_identifiers=qis, sensitive_attribute="income",
                  target="education"),
            origin="bad.yaml",
        )  # fmt: skip
    message = str(err.value)
    assert "quasi-identifier(s) ['relationship', 'occupation'] have none" in message
    assert "hierarchies exist for: age, education, income" in message
    # Mondrian does not generalize along hierarchies: the same QIs are fine.
    parse_config(
        _with(quasi_identifiers=qis, sensitive_attribute="income", target="education")
    )


def test_the_shipped_hierarchies_are_found_without_a_key(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    config = load_config(ROOT / "configs" / "adult-pbg-ea.yaml")
    assert config.hierarchies is None
    assert config.hierarchy_dir == ROOT / "hierarchies" / "adult"


def test_a_hierarchy_directory_from_the_config(tmp_path):
    own = tmp_path / "mine"
    own.mkdir()
    for name in ("age.json", "sex.csv"):
        (own / name).write_bytes((ROOT / "hierarchies" / "adult" / name).read_bytes())
    (own / "notes.txt").write_text("not a hierarchy")
    base = {**PBG, "quasi_identifiers": ["age", "sex", "race"], "hierarchies": str(own)}
    with pytest.raises(ConfigError, match=r"\['race'\] have none; hierarchies exist "
                       r"for: age, sex$"):  # fmt: skip
        parse_config(_with(**base))
    # Names are listed, files are not parsed at load: a broken file still loads.
    (own / "race.csv").write_text("White;*;extra-level\nBlack\n")
    config = parse_config(_with(**base))
    assert config.hierarchy_dir == own


def test_a_missing_hierarchy_directory_is_named(tmp_path):
    absent = tmp_path / "nowhere"
    with pytest.raises(ConfigError, match=f"hierarchies: directory '{absent}'"):
        parse_config(_with(hierarchies=str(absent)))


def test_no_shipped_hierarchies_for_the_dataset(tmp_path):
    data = _with(**PBG, dataset="census")
    data["source"] = {"kind": "csv", "path": str(tmp_path / "census.csv")}
    with pytest.raises(ConfigError, match="none ship for dataset 'census'; name a"):
        parse_config(data)


def test_packaged_data_comes_first_then_the_checkout(tmp_path):
    packaged, checkout = tmp_path / "pkg", tmp_path / "repo"
    (checkout / "hierarchies").mkdir(parents=True)
    roots = (packaged, checkout)
    assert resources.data_dir("hierarchies", roots=roots) == checkout / "hierarchies"
    (packaged / "hierarchies").mkdir(parents=True)
    assert resources.data_dir("hierarchies", roots=roots) == packaged / "hierarchies"
    with pytest.raises(UnknownDatasetError, match="no shipped configs directory"):
        resources.data_dir("configs", roots=roots)
    # In this checkout (an editable install) the repository folders are used.
    assert resources.data_dir("configs") == ROOT / "configs"
    assert resources.hierarchies_dir("german") == ROOT / "hierarchies" / "german"
    assert resources.hierarchies_dir("census") is None


def test_the_hierarchy_fingerprint_follows_names_and_bytes(tmp_path):
    one, two = tmp_path / "one", tmp_path / "two"
    for directory in (one, two):
        directory.mkdir()
        (directory / "sex.csv").write_text("Female;*\nMale;*\n")
    assert resources.hierarchy_fingerprint(one) == resources.hierarchy_fingerprint(two)
    (two / "sex.csv").write_text("Female;*\nMale;*\nOther;*\n")
    assert resources.hierarchy_fingerprint(one) != resources.hierarchy_fingerprint(two)
    (two / "sex.csv").rename(two / "gender.csv")
    (two / "gender.csv").write_text("Female;*\nMale;*\n")
    assert resources.hierarchy_fingerprint(one) != resources.hierarchy_fingerprint(two)


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        ({"k": 0}, "k = 0 is not allowed"),
        ({"k": 0}, "an integer >= 1 and <= 1000000"),
        ({"seed": -3}, "seed = -3"),
        ({"suppression_limit": 1.5}, "a number >= 0.0 and <= 1.0"),
        ({"kk": 5}, "unknown key 'kk'"),
        ({"discretize": {"method": "kmeans"}}, "'mdl', 'equal-frequency', 'none'"),
        (
            {"discretize": {"bins": 4}},
            "unknown key 'discretize.bins' (did you mean 'n_bins'?); allowed keys: "
            "method, n_bins, columns",
        ),
        ({"algorithm": "nope"}, "algorithm 'nope' is not registered; allowed:"),
        (
            {"algorithm": "mondrain"},
            "algorithm 'mondrain' is not registered (did you mean 'mondrian'?); "
            "allowed:",
        ),
        ({"sed": 1}, "unknown key 'sed' (did you mean 'seed'?); allowed keys:"),
        (
            {"compute": {"engine": "dsak"}},
            "compute.engine = 'dsak' is not allowed (Input should be 'auto', 'pandas' or "
            "'dask'; did you mean 'dask'?)",
        ),
        (
            {"params": {"splitt": "median"}},
            "mondrian: unknown parameter(s) ['splitt'] ('splitt': did you mean "
            "'split'?)",
        ),
        ({"source": {"kind": "csv"}}, "needs key(s) ['path']"),
        (
            {**PBG, "params": {"eps": -1}},
            "pbg-ea: parameter 'eps' must be a positive number or a list of positive "
            "numbers; got -1",
        ),
        (
            {**PBG, "params": {"eps": [1, 2, 3]}},
            "pbg-ea: parameter 'eps' must be a positive number or a list of 2 "
            "positive numbers (one per objective); got [1, 2, 3]",
        ),
        (
            {"target": "age"},
            "target names 'age', whose role under 'columns' is 'quasi_identifier'",
        ),
        ({"l": 3, "sensitive_attribute": None}, "l = 3 needs a sensitive_attribute"),
        ({"l_variant": "recursive"}, "l_variant 'recursive' needs c"),
        ({"compute": {"verify_engine": "spark"}}, "'auto', 'pandas', 'dask'"),
        ({"compute": {"memory_limit": "lots"}}, "compute.memory_limit"),
        ({"work_dir": 3}, "work_dir = 3 is not allowed"),
    ],
)
def test_bad_configs_name_the_key_and_the_allowed_range(changes, expected):
    with pytest.raises(ConfigError) as err:
        parse_config(_with(**changes), origin="bad.yaml")
    assert expected in str(err.value)
    assert str(err.value).startswith("config bad.yaml:")


def test_missing_file_and_bad_yaml(tmp_path):
    with pytest.raises(ConfigError, match="file not found"):
        load_config(tmp_path / "absent.yaml")
    broken = tmp_path / "broken.yaml"
    broken.write_text("k: [1, 2\n")
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_config(broken)


def test_overrides_are_validated_too():
    config = default_config("adult").with_overrides(k=25, seed=7, l=None)
    assert (config.k, config.seed, config.l) == (25, 7, 2)
    with pytest.raises(ConfigError, match="k = -1"):
        default_config("adult").with_overrides(k=-1)


def test_yaml_round_trip(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(default_config("german").model_dump(by_alias=True)))
    assert load_config(path) == default_config("german")


def test_a_column_the_source_lacks_is_named_with_the_closest_ones(tmp_path):
    from ppdm.config import check_source_columns

    csv = tmp_path / "people.csv"
    csv.write_text("age,zip_code,sex,diagnosis,outcome\n30,12345,F,flu,yes\n")
    base = {
        "dataset": "people",
        "source": {"kind": "csv", "path": str(csv)},
        "quasi_identifiers": ["age", "zipcode", "sex"],
        "sensitive_attribute": "diagnosis",
        "target": "outcom",
        "k": 2,
    }
    with pytest.raises(ConfigError) as err:
        check_source_columns(parse_config(base))
    text = str(err.value)
    assert "quasi_identifiers names 'zipcode'" in text and "'zip_code'" in text
    assert "target names 'outcom'" in text and "did you mean 'outcome'" in text
    assert "sensitive attribute names" not in text  # diagnosis is a column
    fixed = {
        **base,
        "quasi_identifiers": ["age", "zip_code", "sex"],
        "target": "outcome",
    }
    check_source_columns(parse_config(fixed))  # every named column exists
    embedded = default_config("german").with_overrides(target="credits")
    with pytest.raises(ConfigError, match="did you mean 'credit'"):
        check_source_columns(embedded)


def test_unreadable_config_files_are_one_clear_error(tmp_path):
    with pytest.raises(ConfigError, match="is a directory"):
        load_config(tmp_path)
    latin = tmp_path / "latin.yaml"
    latin.write_bytes("dataset: caf\xe9\n".encode("latin-1"))
    with pytest.raises(ConfigError, match="not UTF-8 text"):
        load_config(latin)


# -- strict YAML and strict types ---------------------------------------------
def _german_yaml(tmp_path, edit=lambda text: text) -> Path:
    path = tmp_path / "german.yaml"
    path.write_text(edit((ROOT / "configs" / "german.yaml").read_text()))
    return path


def _line_of(path: Path, startswith: str, nth: int = 0) -> int:
    lines = path.read_text().splitlines()
    found = [i + 1 for i, line in enumerate(lines) if line.startswith(startswith)]
    return found[nth]


@pytest.mark.parametrize(
    ("edit", "key", "prefix"),
    [
        (lambda t: t + "k: 3\n", "k", "k: "),
        (
            lambda t: t.replace("  method: mdl", "  method: mdl\n  method: none"),
            "discretize.method",
            "  method: ",
        ),
        (
            lambda t: t.replace("  job: quasi_identifier", "  job: drop\n  job: qu"),
            "columns.job",
            "  job: ",
        ),
        (lambda t: t + '"seed": 4\n', "seed", ("seed: ", '"seed"')),
    ],
)
def test_a_key_given_twice_is_named_with_both_lines(tmp_path, edit, key, prefix):
    path = _german_yaml(tmp_path, edit)
    prefixes = prefix if isinstance(prefix, tuple) else (prefix,)
    lines = sorted(
        i + 1
        for i, line in enumerate(path.read_text().splitlines())
        if line.startswith(prefixes)
    )
    assert len(lines) == 2
    with pytest.raises(ConfigError) as err:
        load_config(path)
    assert str(err.value) == (
        f"config {path}: key {key!r} is given twice (lines {lines[0]} and "
        f"{lines[1]}); YAML would keep the last one silently: give it once"
    )


def test_keys_brought_in_by_a_merge_may_be_overridden(tmp_path):
    path = _german_yaml(
        tmp_path,
        lambda t: t.replace("discretize:\n  method: mdl", "discretize:\n  <<: "
                            "{method: equal-frequency, n_bins: 4}\n  method: mdl"),
    )  # fmt: skip
    config = load_config(path)
    assert (config.discretize.method, config.discretize.n_bins) == ("mdl", 4)
    # The same key twice in different mappings is not a repetition.
    assert config.columns["job"] == "quasi_identifier" and config.k == 5


@pytest.mark.parametrize(
    ("line", "value", "expected"),
    [
        ("k: true", "True", "true/false is a boolean, not an integer"),
        ("k: '10'", "'10'", "a quoted string is text, not an integer; write k: 10"),
        ('k: "10"', "'10'", "a quoted string is text, not an integer; write k: 10"),
        ("k: 10.0", "10.0", "10.0 is not an integer"),
        ("l: 1.5", "1.5", "1.5 is not an integer"),
        ("seed: '0'", "'0'", "a quoted string is text, not an integer; write seed: 0"),
        ("seed: false", "False", "true/false is a boolean, not an integer"),
        (
            "suppression_limit: '0.1'",
            "'0.1'",
            "a quoted string is text, not a number; write suppression_limit: 0.1",
        ),
        ("suppression_limit: .nan", "nan", "nan is not a finite number"),
        ("t: .inf", "inf", "inf is not a finite number"),
        ("c: yes", "True", "true/false is a boolean, not a number"),
        ("pseudonymize: 'no'", "'no'", "a quoted string is text, not true or false"),
        ("pseudonymize: 0", "0", "an integer is not true or false"),
    ],
)
def test_numbers_and_booleans_are_strict(tmp_path, line, value, expected):
    key = line.split(":")[0]
    path = _german_yaml(
        tmp_path,
        lambda t: (
            "\n".join(ln for ln in t.splitlines() if not ln.startswith(f"{key}:"))
            + f"\n{line}\n"
        ),
    )
    with pytest.raises(ConfigError) as err:
        load_config(path)
    message = str(err.value)
    assert message.startswith(
        f"config {path}: {key} = {value} is not allowed ({expected})"
    )
    assert "allowed: " in message and "\n" not in message


def test_a_number_key_takes_an_integer(tmp_path):
    path = _german_yaml(
        tmp_path,
        lambda t: (
            t + "suppression_limit: 0\nt: 1\nverification: {size_threshold_mb: 64}\n"
        ),
    )
    config = load_config(path)
    assert config.suppression_limit == 0.0 and isinstance(
        config.suppression_limit, float
    )
    assert config.t == 1.0 and config.compute.verify_threshold_mb == 64.0
    assert (config.k, config.l, config.seed) == (5, 2, 0)


def test_every_shipped_config_loads_strictly():
    """The shipped configs and the deployments' parameters pass the strict rules."""
    for path in sorted((ROOT / "configs").glob("*.yaml")):
        assert load_config(path).dataset in path.stem
    spec = yaml.safe_load((ROOT / "deployments" / "prefect.yaml").read_text())
    for entry in spec["deployments"]:
        parse_config(entry["parameters"]["config"], origin=entry["name"])


def test_yaml_errors_and_non_mappings_are_one_line(tmp_path):
    broken = tmp_path / "broken.yaml"
    broken.write_text("dataset: german\nk: [1, 2\n")
    with pytest.raises(ConfigError) as err:
        load_config(broken)
    assert str(err.value) == (
        f"config {broken}: not valid YAML: line 3, column 1: expected ',' or ']', "
        "but got '<stream end>' (while parsing a flow sequence that starts on line 2)"
    )
    for text, got in [("", "an empty document"), ("- 1\n- 2\n", "a list")]:
        broken.write_text(text)
        with pytest.raises(ConfigError) as err:
            load_config(broken)
        assert (
            str(err.value) == f"config {broken}: expected a mapping of keys, got {got}"
        )


def test_a_source_delimiter_is_for_csv_and_one_of_four():
    data = _with(source={"kind": "csv", "path": "t.csv", "delimiter": ";"})
    assert parse_config(data).source.delimiter == ";"
    with pytest.raises(ConfigError, match="source.delimiter is for CSV files"):
        parse_config(
            _with(source={"kind": "parquet", "path": "t.pq", "delimiter": ";"})
        )
    with pytest.raises(ConfigError) as err:
        parse_config(_with(source={"kind": "csv", "path": "t.csv", "delimiter": ":"}))
    assert "source.delimiter = ':' is not allowed" in str(err.value)


def test_a_missing_role_key_says_columns_can_give_it():
    data = {
        "dataset": "t",
        "source": {"kind": "csv", "path": "t.csv"},
        "columns": {"age": "insensitive", "outcome": "insensitive"},
    }
    with pytest.raises(ConfigError) as err:
        parse_config(data, origin="t.yaml")
    assert str(err.value) == (
        "config t.yaml: required key 'quasi_identifiers' is missing (or give a column "
        "the role 'quasi_identifier' under 'columns'); required key 'target' is "
        "missing (or give a column the role 'target' under 'columns')"
    )
