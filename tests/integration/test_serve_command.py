"""``ppdm serve`` without a server: options, schedules, parameters, consistency.

The scheduler's side, with a real server, is in ``test_schedule.py``.
"""

from __future__ import annotations

import argparse
import datetime
import importlib.util
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import cloudpickle
import pytest
import yaml

from ppdm.config import ReleaseConfig, default_config, load_config, parse_config
from ppdm.exceptions import InvalidParameterError
from ppdm.flows import serve

ROOT = Path(__file__).resolve().parents[2]
CONFIGS = sorted((ROOT / "configs").glob("*.yaml"))


def _parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="ppdm")
    serve.add_parser(parser.add_subparsers(dest="command", required=True))
    return parser.parse_args(argv)


def test_serve_options_and_their_defaults():
    args = _parse(["serve", "--config", "c.yaml"])
    assert (args.command, args.config) == ("serve", Path("c.yaml"))
    assert (args.cron, args.interval, args.name) == (None, None, None)
    assert args.timezone == "UTC"
    args = _parse(
        ["serve", "--config", "c.yaml", "--interval", "7.5", "--name", "nightly"]
        + ["--timezone", "Europe/Berlin"]
    )
    assert (args.interval, args.name, args.timezone) == (
        7.5,
        "nightly",
        "Europe/Berlin",
    )
    assert _parse(["serve", "--config", "c", "--cron", "0 3 * * *"]).cron == "0 3 * * *"


@pytest.mark.parametrize(
    "argv",
    [
        ["serve"],  # --config is required
        ["serve", "--config", "c", "--cron", "0 3 * * *", "--interval", "5"],
        ["serve", "--config", "c", "--interval", "soon"],
    ],
)
def test_serve_rejects_bad_command_lines(argv, capsys):
    with pytest.raises(SystemExit) as exit_:
        _parse(argv)
    assert exit_.value.code == 2


def test_default_schedule_is_the_monthly_cron_in_utc():
    sched = serve.schedule()
    assert (sched.cron, sched.interval, sched.timezone) == ("0 2 1 * *", None, "UTC")
    assert serve.DEFAULT_CRON == "0 2 1 * *"


def test_schedule_keeps_cron_interval_and_timezone():
    sched = serve.schedule(cron="30 6 * * 1", timezone="Europe/Berlin")
    assert (sched.cron, sched.timezone) == ("30 6 * * 1", "Europe/Berlin")
    sched = serve.schedule(interval=90, timezone="America/New_York")
    assert sched.interval == datetime.timedelta(seconds=90)
    assert (sched.cron, sched.timezone) == (None, "America/New_York")


@pytest.mark.parametrize(
    ("kwargs", "named"),
    [
        ({"cron": "61 * * * *"}, "--cron '61 * * * *'"),
        ({"cron": "every day"}, "--cron 'every day'"),
        ({"interval": 0}, "--interval = 0"),
        ({"interval": -5.0}, "--interval = -5.0"),
        ({"interval": math.inf}, "--interval = inf"),
        ({"interval": math.nan}, "--interval = nan"),
        ({"timezone": "Mars/Olympus"}, "--timezone 'Mars/Olympus'"),
        ({"cron": "0 2 * * *", "interval": 60}, "exclude each other"),
    ],
)
def test_bad_schedule_names_the_option(kwargs, named):
    with pytest.raises(InvalidParameterError) as err:
        serve.schedule(**kwargs)
    assert named in str(err.value)
    assert "allowed" in str(err.value)


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.name)
def test_deployment_parameters_round_trip(path):
    config = load_config(path)
    parameters = serve.deployment_parameters(config)
    assert list(parameters) == ["config"]
    # What the API stores is JSON; it validates back into the same configuration.
    stored = json.loads(json.dumps(parameters))
    assert parse_config(stored["config"]) == config


def test_served_flow_validates_its_config_after_pickling():
    """A served run gets the flow by cloudpickle in a spawned process."""
    config = default_config("german").with_overrides(k=7, seed=3)
    flow = cloudpickle.loads(cloudpickle.dumps(serve.servable_release()))
    parameters = json.loads(json.dumps(serve.deployment_parameters(config)))
    validated = flow.validate_parameters(parameters)
    assert isinstance(validated["config"], ReleaseConfig)
    assert validated["config"] == config
    assert validated["config"].requirement.k == 7


def test_bad_name_and_config_fail_before_serving(tmp_path, capsys):
    config = ROOT / "configs" / "german.yaml"
    assert serve.main(["--config", str(config), "--name", "a/b"]) == 1
    assert "--name 'a/b'" in capsys.readouterr().err
    assert serve.main(["--config", str(config), "--cron", "0 25 * * *"]) == 1
    assert "--cron '0 25 * * *'" in capsys.readouterr().err
    bad = tmp_path / "bad.yaml"
    bad.write_text("dataset: german\nk: 0\n", encoding="utf-8")
    assert serve.main(["--config", str(bad)]) == 2
    assert "config" in capsys.readouterr().err


def test_serve_without_a_server_says_how_to_start_one(tmp_path):
    env = {key: value for key, value in os.environ.items() if key != "PREFECT_API_URL"}
    env["PREFECT_HOME"] = str(tmp_path)
    done = subprocess.run(
        [sys.executable, "-m", "ppdm.flows.serve"]
        + ["--config", str(ROOT / "configs" / "german.yaml"), "--interval", "60"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "PREFECT_API_URL is not set" in done.stderr
    assert "prefect server start" in done.stderr


def _prefect_yaml() -> dict:
    return yaml.safe_load((ROOT / "deployments" / "prefect.yaml").read_text())


def test_prefect_yaml_monthly_schedule_is_the_serve_default():
    spec = _prefect_yaml()
    monthly = spec["definitions"]["schedules"]["monthly"]
    assert monthly == {"cron": serve.DEFAULT_CRON, "timezone": serve.DEFAULT_TIMEZONE}
    for entry in spec["deployments"]:
        assert entry["entrypoint"] == "ppdm.flows.release:release"
        parse_config(entry["parameters"]["config"], origin=entry["name"])


def test_deployments_serve_builds_what_prefect_yaml_says():
    loader = importlib.util.spec_from_file_location(
        "ppdm_deployments_serve", ROOT / "deployments" / "serve.py"
    )
    module = importlib.util.module_from_spec(loader)
    loader.loader.exec_module(module)
    built = {d.name: d for d in module.deployments_from_yaml()}
    entries = {e["name"]: e for e in _prefect_yaml()["deployments"]}
    assert set(built) == set(entries) and built
    for name, entry in entries.items():
        deployment = built[name]
        got = [(s.schedule.cron, s.schedule.timezone) for s in deployment.schedules]
        assert got == [(s["cron"], s["timezone"]) for s in entry["schedules"]]
        assert deployment.parameters == serve.deployment_parameters(
            parse_config(entry["parameters"]["config"])
        )
        assert deployment.description == entry["description"]
