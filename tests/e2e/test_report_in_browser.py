"""report.html as a reader sees it: opened by a real browser (headless Chromium).

The page is the release's record: its id, creation date and the verifier's
verdict must be in what the browser renders, not only in the file's bytes.
Debian's ``chromium`` package provides the browser (`.ci/run` installs it).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from ppdm import pipeline
from ppdm.config import default_config
from ppdm.release.audit import read_entries

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"


def _text(dom: str) -> str:
    """The rendered DOM's visible text, tags and whitespace collapsed."""
    body = re.sub(r"<(script|style)\b.*?</\1>", " ", dom, flags=re.S)
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", body))


@pytest.mark.slow
def test_the_browser_shows_the_release_id_date_and_verdict(tmp_path):
    config = default_config("german").with_overrides(
        k=5, l=2, seed=7, output_dir=str(tmp_path / "out")
    )
    release_dir = pipeline.run_release(config).release_dir
    manifest = json.loads((release_dir / "manifest.json").read_text())
    profile = tmp_path / "profile"  # a fresh profile: nothing from another run
    dom = subprocess.run(
        [
            CHROMIUM,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            f"--user-data-dir={profile}",
            "--dump-dom",
            (release_dir / "report.html").resolve().as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout
    text = _text(dom)
    assert f"Release {manifest['release_id']} of german" in text
    # manifest.json: 2026-11-28T17:34:31+00:00; the page: 2026-11-28 17:34:31 UTC
    created = manifest["created_at"].removesuffix("+00:00").replace("T", " ")
    assert f"created {created} UTC" in text
    assert "independent verifier: passed" in text
    # the audit entry the page names is the one that records it
    (entry,) = [
        e
        for e in read_entries(release_dir.parent.parent / "audit.jsonl")
        if e.get("release_id") == manifest["release_id"]
    ]
    assert entry["event"] == "publish"
    assert f"sequence number {entry['seq']} of audit.jsonl" in text
    recorded = {Path(f["path"]).name: f["sha256"] for f in entry["files"]}
    assert recorded["report.html"] == manifest["artifacts"]["report.html"]
    # the figures an analyst needs are rendered too
    assert "majority class" in text and "balanced accuracy" in text
