"""Write the report fixtures: ``<name>.json`` (the utility dict and title) and
``<name>.html.gz`` (the page :func:`render_report_html` makes of it).

The expected pages were made by the string-built renderer, before the report
moved to Jinja2 templates; ``tests/unit/utility/test_report_pages.py`` checks
that the templates give the same bytes. Usage, from a release directory made
by ``ppdm run --dataset german --seed 7`` (and ``--dataset adult``)::

    uv run python tests/data/reports/capture.py german RELEASE_DIR
    uv run python tests/data/reports/capture.py adult RELEASE_DIR
    uv run python tests/data/reports/capture.py every-section RELEASE_DIR
    uv run python tests/data/reports/capture.py empty

Regenerate a page only to fix a defect of the page, and say which. The
every-section page was regenerated when the record section began to show
every check's own figures (``checks``) in place of the release models' line.
"""

from __future__ import annotations

import copy
import gzip
import json
import sys
from pathlib import Path

from ppdm.utility.report import render_report_html

HERE = Path(__file__).resolve().parent


def published(release_dir: Path) -> tuple[dict, str]:
    """The utility dict of the published page, as the publish step builds it."""
    manifest = json.loads((release_dir / "manifest.json").read_bytes())
    utility = json.loads((release_dir / "utility.json").read_bytes())
    record = dict(utility.get("record") or {})
    record.update(
        {
            "release_id": manifest["release_id"],
            "created_at": manifest["created_at"],
            "audit_key_id": None,
            "audit_seq": 0,
            "source_sha256": manifest["source_sha256"],
            # A first release of the series: nothing held back, nothing compared.
            "series_rows": {
                "held_back": 0,
                "kept_from_earlier_releases": 0,
                "against": [],
            },
            "command": (
                "ppdm run --config release.yaml  (release.yaml: the `config` object "
                f"of manifest.json; seed {manifest['seed']}; the source with sha256 "
                f"{manifest['source_sha256']})"
            ),
        }
    )
    utility["record"] = record
    title = utility.get("title") or f"{manifest['dataset']}: {manifest['algorithm']}"
    page = render_report_html(utility, title=title)
    # The reconstruction is the publish step's: same bytes as the released page.
    if page.encode() != (release_dir / "report.html").read_bytes():
        raise SystemExit(
            f"{release_dir}: the page rendered again differs from report.html"
        )
    return utility, title


def every_section(release_dir: Path) -> tuple[dict, str]:
    """A German page with every optional section filled, quotes and markup in
    the text so that escaping shows."""
    utility, _ = published(release_dir)
    u = copy.deepcopy(utility)
    record = u["record"]
    record["audit_key_id"] = "k-3f2a"
    record["series_rows"] = {
        "held_back": 12,
        "kept_from_earlier_releases": 3400,
        "against": ["r-0001", "r-0002"],
    }
    record["measured_on"] = {
        "clean_rows": 1000,
        "clean_rows_total": 120000,
        "released_rows": {"release": 990, "<view & 'b'>": 980},
        "released_rows_total": {"release": 118000},
        "seed": 7,
    }
    record.pop("release_models", None)  # what records held before "checks"
    record["checks"] = [
        {
            "check": "set-anonymity",
            "kind": "release",
            "on": "all tables together",
            "required": "k = 5",
            "achieved": "SAL = 7.5",
            "verdict": "passed",
            "summary": "set <anonymity> (SAL=7.5)",
        },
        {
            "check": "differencing",
            "kind": "series",
            "on": "against release r-0002",
            "required": "n_leaking_classes = 0, n_leaking_rollups = 0",
            "achieved": "n_leaking_classes = 1, n_leaking_rollups = 0",
            "verdict": "accepted risk",
            "summary": "release against release r-0002: 1 class & 'x' leaks",
        },
    ]
    record["series"] = {
        "results": [
            {
                "check": "differencing",
                "table": "release",
                "against": "r-0001",
                "n_common_classes": 40,
                "rows_added": 5,
                "rows_removed": 2,
                "n_rollups": 1,
                "n_leaking_classes": 0,
                "n_leaking_rollups": 0,
                "passed": True,
                "accepted_risk": False,
            },
            {
                "check": "differencing",
                "table": "release",
                "against": "r-0002",
                "n_common_classes": 38,
                "rows_added": 1,
                "rows_removed": 0,
                "n_leaking_classes": 1,
                "passed": False,
                "accepted_risk": True,
            },
            {
                "check": "same-source",
                "table": "release",
                "against": "r-0000",
                "n_groups": 55,
                "n_leaking_groups": 2,
                "rows_exposed": 4,
                "passed": False,
                "accepted_risk": False,
            },
        ],
        "composition": {
            "run": True,
            "results": [
                {
                    "attribute": "purpose",
                    "against": ["r-0001", "r-0002"],
                    "n_persons": 900,
                    "n_below_l": 3,
                    "n_certain": 1,
                    "n_exposed": 0,
                    "passed": True,
                    "accepted_risk": False,
                }
            ],
            "not_compared": {"r-0000": "no record key <key> & 'id'"},
        },
    }
    u["passthrough"] = [
        {
            "column": "telephone",
            "table": "release",
            "k": 5,
            "classes_below_k": 3,
            "below_k_share": 0.0125,
            "unique_share": 0.9999,
            "proxy_measured": True,
            "proxy_share": 0.25,
            "proxy_attribute": "age",
            "limits": {"max_below_k_share": 0.05, "max_proxy_share": 0.1},
            "status": "accepted above a limit",
            "accepted": True,
            "exceeds": True,
        },
        {
            "column": "name <full> & 'nick'",
            "table": "release",
            "k": 5,
            "classes_below_k": 0,
            "below_k_share": 0.0,
            "unique_share": 0.0,
            "proxy_measured": False,
            "limits": {},
            "status": "passed",
            "acknowledged": True,
            "identifier": "looks like a name",
        },
    ]
    first = next(iter(u["tables"].values()))
    second = copy.deepcopy(first)
    second["class_columns"] = ["age=1", "age=2", "sex=F"]
    u["tables"] = {"release": first, "view <2> & 'x'": second}
    u["release"] = {
        "ncp": {"mean": 0.31, "total": 12.5, "per_attribute": {"age": 0.2}},
        "suppressed_cells": 4,
        "lost_records": 0,
        "released_in": {"age": ["release"], "telephone": []},
    }
    holdout = u["holdout"]
    holdout["views"] = ["release", "view <2> & 'x'"]
    for entry in holdout["accuracy"].values():
        entry["per_view"] = {"release": 0.7, "view <2> & 'x'": 0.65}
    holdout["error"] = "could not meet k = 5 on the training part: 'too small' <n>"
    u["pareto_front"] = [
        {"node": [1, 0], "k": 3, "GLM": 0.4, "chosen": False},
        {"node": [2, 1], "k": 12, "GLM": 0.7, "chosen": True, "note": "a <b> & 'c'"},
    ]
    u["verdict"]["warnings"] = ['every quasi-identifier is "suppressed" <here>']
    return u, "German <credit> & 'DMPD' \"views\""


def empty() -> tuple[dict, str]:
    """The page of an empty utility dict: every optional section absent."""
    return {
        "record": {
            "dataset": "x",
            "algorithm": "y",
            "verdict": "failed",
            "requirement": {"models": [], "quasi_identifiers": []},
            "series": {
                "results": [],
                "composition": {"run": False, "reason": "no <key> & 'x'"},
            },
        },
        "passthrough": [],
        "columns": [],
        "holdout": {"accuracy": {}, "error": "none & <all>"},
    }, "empty"


def main() -> None:
    name = sys.argv[1]
    if name == "empty":
        utility, title = empty()
    elif name == "every-section":
        utility, title = every_section(Path(sys.argv[2]))
    else:
        utility, title = published(Path(sys.argv[2]))
    page = render_report_html(utility, title=title)
    (HERE / f"{name}.json").write_text(
        json.dumps({"title": title, "utility": utility}, indent=1) + "\n",
        encoding="utf-8",
    )
    with gzip.GzipFile(HERE / f"{name}.html.gz", "wb", mtime=0) as handle:
        handle.write(page.encode("utf-8"))


if __name__ == "__main__":
    main()
