"""utility.json content and the self-contained, deterministic HTML report."""

from __future__ import annotations

import base64
import json

import matplotlib
import numpy as np
import pandas as pd
import pytest

from ppdm.model import AnonymizationSpec
from ppdm.utility import holdout_utility
from ppdm.utility.report import build_utility, render_report_html

QI = ("age", "sex")


@pytest.fixture()
def original() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    n = 120
    age = rng.integers(20, 70, n)
    return pd.DataFrame(
        {
            "age": age,
            "sex": pd.array(rng.choice(["F", "M"], n), dtype="string"),
            "income": pd.array(np.where(age > 45, "hi", "lo"), dtype="string"),
        }
    )


def _generalize(table: pd.DataFrame) -> pd.DataFrame:
    decade = table["age"] // 10 * 10
    return table.assign(age=[f"[{d}, {d + 9}]" for d in decade], sex="*").iloc[
        : len(table) - 3
    ]  # three records dropped


@pytest.fixture()
def utility(original) -> dict:
    spec = AnonymizationSpec.of(
        quasi_identifiers=QI, sensitive_attribute=None, target="income", k=2
    )
    holdout = holdout_utility(original, _generalize, target="income", seed=0)
    evidence = {
        "pareto_front": [
            {"node": [1, 0], "k": 3, "GLM": 0.4, "CM": 0.2, "chosen": False},
            {"node": [2, 1], "k": 12, "GLM": 0.7, "CM": 0.1, "chosen": True},
            {"node": [3, 1], "k": 40, "GLM": 0.9, "CM": 0.3, "chosen": False},
        ]
    }
    return build_utility(
        original, {"release": _generalize(original)}, spec, holdout, evidence
    )


def test_build_utility_content(utility, original):
    json.dumps(utility, allow_nan=False)
    table = utility["tables"]["release"]
    assert table["lost_records"] == 3 and utility["lost_records"] == 3
    assert utility["suppressed_cells"] == len(original) - 3
    assert table["ncp"]["per_attribute"]["sex"] == pytest.approx(1.0)
    # class sizes add up to the released rows
    assert sum(s * c for s, c in table["class_size_distribution"]) == len(original) - 3
    assert utility["protocol"].startswith("Hold-out protocol")
    assert set(utility["holdout"]["accuracy"]) == {
        "decision_tree",
        "naive_bayes",
        "logistic_regression",
    }
    assert utility["pareto_front"][1]["chosen"] is True


def test_report_is_self_contained_and_deterministic(utility, tmp_path):
    rc_before = dict(matplotlib.rcParams)
    first = render_report_html(utility, title="adult: test, k=2", plots_dir=tmp_path)
    second = render_report_html(utility, title="adult: test, k=2")
    assert first == second
    assert dict(matplotlib.rcParams) == rc_before
    assert (
        first.count('<img src="data:image/png;base64,') == 3
    )  # accuracy, sizes, Pareto
    for heading in (
        "Classification accuracy",
        "Protocol",
        "Information loss",
        "Class-size distribution",
        "Pareto front",
    ):
        assert heading in first
    assert "training part only" in first
    assert "GLM" in first and "chosen" in first
    written = sorted(p.name for p in tmp_path.iterdir())
    assert written == ["accuracy.png", "class_sizes.png", "pareto.png"]
    embedded = base64.b64encode((tmp_path / "accuracy.png").read_bytes()).decode()
    assert embedded in first
    assert b"Software" not in (tmp_path / "accuracy.png").read_bytes()


def test_report_without_holdout_or_front(original):
    spec = AnonymizationSpec.of(
        quasi_identifiers=QI, sensitive_attribute=None, target="income", k=1
    )
    utility = build_utility(original, {"release": original}, spec, None, {})
    page = render_report_html(utility, title="plain")
    assert "No hold-out evaluation" in page
    assert "Pareto front" not in page
    assert page.count("data:image/png;base64,") == 1


def test_a_failing_algorithm_still_gives_a_report(original):
    from ppdm.exceptions import InfeasibleConstraintError

    def infeasible(train):
        raise InfeasibleConstraintError("k=500 exceeds the 84 training rows")

    holdout = holdout_utility(original, infeasible, target="income", seed=0)
    assert holdout["error"].startswith("InfeasibleConstraintError: k=500")
    for scores in holdout["accuracy"].values():
        assert np.isnan(scores["anonymized"]) and scores["original"] > 0.5
    spec = AnonymizationSpec.of(
        quasi_identifiers=QI, sensitive_attribute=None, target="income", k=500
    )
    utility = build_utility(original, {}, spec, holdout, {})
    json.dumps(utility, allow_nan=False)
    page = render_report_html(utility, title="failed")
    assert "could not anonymize the training part" in page
    assert "k=500 exceeds" in page


def test_the_report_lists_every_column_with_its_role_and_as_is_figures(original):
    from ppdm.verify.passthrough import PassthroughPolicy, check_passthrough

    n = len(original)
    source = original.assign(
        visits=3,  # one value: splits no class, pins nothing
        wt=np.arange(n) * 11 + 5,  # a kept survey weight, unique per row
        **{"<b>code</b>": 1},
    )
    roles = {
        "patient_id": "identifying",
        "name": "identifying",
        "age": "quasi_identifier",
        "sex": "quasi_identifier",
        "income": "target",
        "visits": "insensitive",
        "wt": "weight",
        "survey_wt": "weight",
        "notes": "drop",
        "<b>code</b>": "insensitive",
    }
    released = source.astype(str).assign(
        age=[f"[{a // 10 * 10}, {a // 10 * 10 + 9}]" for a in source["age"]],
        sex="*",
        patient_id=[f"{i:032x}" for i in range(n)],  # pseudonyms
    )
    spec = AnonymizationSpec.of(
        quasi_identifiers=QI, sensitive_attribute=None, target="income", k=2
    )
    # wt is distinct for every row: accepted only with an acknowledgement
    policy = PassthroughPolicy(
        columns=("visits", "wt", "<b>code</b>"), accepted=("wt",), acknowledged=("wt",)
    )
    results = check_passthrough(
        released, spec.requirement, policy, source, table="release"
    )
    section = [r.to_dict() for r in results]
    utility = build_utility(
        source, {"release": released}, spec, None, {}, roles=roles, passthrough=section
    )
    json.dumps(utility, allow_nan=False)
    how = {c["column"]: (c["role"], c["released_as"]) for c in utility["columns"]}
    assert list(how) == list(roles)  # every column, in the roles' order
    assert how["patient_id"][1] == "pseudonymized (keyed HMAC-SHA256)"
    assert how["name"][1] == how["notes"][1] == "dropped (never released)"
    assert how["survey_wt"][1] == "dropped (never released)"  # weight not kept
    assert how["wt"][1] == "released as is on purpose (weight)"
    assert how["visits"][1] == "released as is on purpose (insensitive)"
    assert how["age"][1] == "generalized or suppressed (quasi-identifier)"
    assert utility["passthrough"] == section

    page = render_report_html(utility, title="clinic")
    assert "<h2>Columns and how they are released</h2>" in page
    for column, (role, leaves) in how.items():
        if column == "<b>code</b>":
            continue
        cells = f"<td>{column}</td><td>{role.replace('_', ' ')}</td><td>{leaves}</td>"
        assert cells in page
    # the weight: unique per row, so every row is alone in its class
    assert (
        "<tr><td>wt</td><td>release</td><td>2</td>"
        f"<td>{n:,}</td><td>100%</td><td>100%</td><td>0%</td>"
        "<td>0% / 1%</td><td>accepted by the data owner</td></tr>"
    ) in page
    assert (
        "<tr><td>visits</td><td>release</td><td>2</td><td>0</td><td>0%</td>"
        "<td>0%</td><td>0%</td><td>0% / 1%</td><td>within limits</td></tr>"
    ) in page
    assert "Accepted by the data owner</strong> although above a limit: wt" in page
    assert "Warning: released as is although it looks like a direct identifier" in page
    # column names are escaped, never markup
    assert "&lt;b&gt;code&lt;/b&gt;" in page and "<b>code</b>" not in page


def test_without_roles_the_report_reads_them_from_the_spec(original):
    spec = AnonymizationSpec.of(
        quasi_identifiers=QI, sensitive_attribute=None, target="income", k=1
    )
    extra = original.assign(visits="2")
    utility = build_utility(
        extra, {"release": extra.drop(columns="sex")}, spec, None, {}
    )
    how = {c["column"]: (c["role"], c["released_as"]) for c in utility["columns"]}
    assert how == {
        "age": ("quasi_identifier", "generalized or suppressed (quasi-identifier)"),
        "sex": ("quasi_identifier", "withheld (a quasi-identifier no table carries)"),
        "income": ("target", "released as is on purpose (target)"),
        "visits": (None, "released as is (no role given)"),
    }
    page = render_report_html(utility, title="plain")
    assert "did not check the columns released as is" in page
