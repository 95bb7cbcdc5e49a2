"""One row per check, with the check's own figures, for every display of a certificate.

The rows (:func:`ppdm.verify.figures.check_figures`) are what ``ppdm verify``,
``ppdm show``, the run log, the Prefect UI and ``report.html`` show. A
certificate of k and entropy l-diversity, a differencing check against an
earlier release and a differential privacy entry must give exactly those rows,
with hand-computed figures, the same from the object and from
``verification.json`` read back; and the displays built from them (the Markdown
of the UI, the record page) must show them and no measure of a check that was
not configured.
"""

from __future__ import annotations

import json
import math
import re

import pandas as pd

from ppdm.privacy import Requirement
from ppdm.utility.report_data import release_record
from ppdm.utility.report_html import render_report_html
from ppdm.utility.report_text import accuracy_markdown
from ppdm.verify import verify_tables
from ppdm.verify.composition import CompositionCheck
from ppdm.verify.differencing import SeriesCheck, check_against
from ppdm.verify.differential import DifferentialPrivacyCheck
from ppdm.verify.figures import CHECK_COLUMNS, check_figures
from ppdm.verify.same_rows import SameRowsCheck

REQUIREMENT = Requirement.of(("age",), "dx", k=2, l=1.5, l_variant="entropy")


def _table(rows):
    return pd.DataFrame(rows, columns=["age", "dx"]).astype(str)


# Two classes: [20, 29] with dx flu, cold, flu (entropy l = exp(H(1/3, 2/3)))
# and [30, 39] with flu, cold (entropy l = 2).
MONTH_2 = _table(
    [("[20, 29]", d) for d in ("flu", "cold", "flu")]
    + [("[30, 39]", d) for d in ("flu", "cold")]
)
MONTH_1 = _table(
    [("[20, 29]", d) for d in ("flu", "cold")]
    + [("[30, 39]", d) for d in ("flu", "cold")]
)
ENTROPY_L = math.exp(-(1 / 3) * math.log(1 / 3) - (2 / 3) * math.log(2 / 3))


def _certificate():
    certificate = verify_tables({"t": MONTH_2}, REQUIREMENT)
    series = check_against({"t": MONTH_2}, {"t": MONTH_1}, REQUIREMENT, against="m1")
    dp = DifferentialPrivacyCheck(
        algorithm="safepub",
        epsilon=1.0,
        delta=1e-6,
        k=2,
        beta=0.1,
        smallest_class={"t": 2},
        declared_columns=("age", "dx"),
        extra_columns={"t": ()},
    )
    return certificate.with_series(series).with_differential_privacy(dp)


def test_each_check_has_one_row_with_its_own_figures():
    rows = check_figures(_certificate())
    assert [(r.check, r.kind, r.on) for r in rows] == [
        ("k-anonymity", "class", "t"),
        ("entropy-l-diversity", "class", "t"),
        ("differential-privacy", "release", "all tables together"),
        ("differencing", "series", "against release m1"),
    ]
    k, entropy, dp, differencing = rows
    assert (k.required, k.achieved, k.verdict) == ("k = 2", "k = 2", "passed")
    assert entropy.required == "attribute = dx, l = 1.5"
    assert entropy.achieved == f"l = {ENTROPY_L:g}" == "l = 1.88988"
    assert entropy.verdict == "passed"
    assert dp.required == "epsilon = 1, delta = 1e-06, smallest_class = 2"
    assert dp.achieved == "epsilon = 1, delta = 1e-06, k = 2, smallest_class = 2"
    # One flu arrived in [20, 29]: a group of one row, below k.
    assert differencing.required == "n_leaking_classes = 0, n_leaking_rollups = 0"
    assert differencing.achieved == (
        "n_leaking_classes = 1, n_leaking_rollups = 0, rows_exposed = 1"
    )
    assert differencing.verdict == "failed" and not differencing.passed
    assert k.line() == "k-anonymity on t: required k = 2; achieved k = 2; passed"


def test_the_rows_of_the_file_read_back_are_the_rows_of_the_object():
    certificate = _certificate()
    content = json.loads(certificate.to_json())
    assert check_figures(content) == check_figures(certificate)


def test_an_accepted_leak_reads_as_an_accepted_risk():
    leak = SeriesCheck("t", "m1", 2, 1, 0, 1, 1, accepted=True)
    certificate = verify_tables({"t": MONTH_2}, REQUIREMENT).with_series([leak])
    (row,) = [r for r in check_figures(certificate) if r.kind == "series"]
    assert row.verdict == "accepted risk" and row.passed
    assert "accepted by the data owner" in row.summary


def test_series_results_round_trip_through_their_json_entries():
    results = [
        SeriesCheck("t", "m1", 4, 2, 1, 1, 3, ({"age": "x", "added": 1},), True, 2, 1),
        SameRowsCheck("t", "m0", 9, 2, 5, ({"age": "y"},), False),
        CompositionCheck("dx", ("m1", "m2"), 2, 30, 4, 1, 2, True),
    ]
    for result in results:
        entry = json.loads(json.dumps(result.to_dict()))
        assert entry["passed"] is result.passed
        assert entry["accepted_risk"] is (result.accepted and result.leaks)
        again = type(result).from_dict(entry)
        assert again == result
    assert results[1].to_dict()["check"] == "same-source"
    assert "accepted" not in results[2].to_dict()
    assert results[2].required == {"l": 2, "n_exposed": 0}


def test_an_older_differencing_entry_without_roll_ups_reads_back():
    entry = SeriesCheck("t", "m1", 4, 2, 1, 0, 0).to_dict()
    del entry["n_rollups"], entry["n_leaking_rollups"], entry["examples"]
    again = SeriesCheck.from_dict(entry)
    assert (again.n_rollups, again.n_leaking_rollups, again.examples) == (0, 0, ())


def _record_utility(certificate) -> dict:
    record = release_record(
        json.loads(certificate.to_json()),
        {"t": "ab" * 32},
        dataset="toy",
        algorithm="mondrian",
        code_version="0",
        library_versions={},
    )
    return {"record": record}


def test_the_record_page_and_the_ui_markdown_show_the_checks_configured():
    certificate = verify_tables({"t": MONTH_2}, REQUIREMENT)
    utility = _record_utility(certificate)
    page = render_report_html(utility, title="toy")
    header = "".join(f"<th>{c}</th>" for c in CHECK_COLUMNS)
    assert header in page
    assert (
        "<tr><td>entropy-l-diversity</td><td>class</td><td>t</td>"
        "<td>attribute = dx, l = 1.5</td><td>l = 1.88988</td><td>passed</td></tr>"
    ) in page
    markdown = accuracy_markdown(utility)
    assert (
        "| entropy-l-diversity | class | t | attribute = dx, l = 1.5 | l = 1.88988 "
        "| passed |"
    ) in markdown
    # Neither shows a measure of a model the requirement does not hold,
    # although the certificate's table measures hold distinct l and t too.
    assert set(json.loads(certificate.to_json())["tables"]["t"]["measures"]) >= {
        "distinct_l",
        "t",
    }
    for text in (page, markdown):
        assert not re.search(r"distinct|t-closeness|recursive|\bt = ", text)


def test_a_release_of_k_alone_shows_k_alone():
    certificate = verify_tables({"t": MONTH_2}, Requirement.of(("age",), k=2))
    rows = check_figures(certificate)
    assert [(r.check, r.achieved) for r in rows] == [("k-anonymity", "k = 2")]
    page = render_report_html(_record_utility(certificate), title="toy")
    assert page.count("<td>k-anonymity</td>") == 1
    assert not re.search(r"diversity|closeness|\bl = ", page)
