"""One recipe: the pipeline, the utility protocol and the comparison make one table.

The cross-check runs the three entry points on the same training split of
German credit: the release pipeline's discretize and anonymize steps (on the
split as their whole table, through a real artifact store and the released
CSV), the utility report's hold-out protocol (its own stratified split, which
the test reproduces) and ``ppdm compare``'s unit of work; each must give the
same anonymized training table. One binned algorithm (mondrian) and one that
takes raw numbers (lattice-optimal) cover both sides of the rule.
"""

from __future__ import annotations

import doctest
from pathlib import Path

import pandas as pd
import pytest
from sklearn.model_selection import train_test_split

from ppdm import pipeline, recipe
from ppdm.algorithms import ALGORITHMS
from ppdm.config import load_config
from ppdm.experiments import compare as C
from ppdm.experiments.compare import cell as compare_cell
from ppdm.experiments.compare import grid as compare_grid
from ppdm.prepare import datasets
from ppdm.steps.anonymize import anonymize_step
from ppdm.steps.base import hierarchies_of
from ppdm.steps.discretize import discretize_step
from ppdm.utility.report import utility_report

ROOT = Path(__file__).resolve().parents[2]
GERMAN = ROOT / "configs" / "german.yaml"


def test_docstring_examples():
    result = doctest.testmod(recipe, optionflags=doctest.ELLIPSIS, verbose=False)
    assert result.attempted > 0
    assert result.failed == 0


@pytest.mark.parametrize(
    ("name", "raw"),
    [
        ("mondrian", False),
        ("kactus", False),
        ("dmpd", False),
        ("lattice-optimal", True),
        ("pbg-ea", True),
        ("safepub", True),
    ],
)
def test_the_rule_about_unbinned_numbers(name, raw):
    assert recipe.takes_raw_numbers(name) is raw
    assert recipe.takes_raw_numbers(ALGORITHMS[name]) is raw
    binning = recipe.binning_for(name, {"method": "equal-frequency", "n_bins": 4})
    assert binning.method == ("none" if raw else "equal-frequency")


def _rows(table: pd.DataFrame) -> list[tuple[str, ...]]:
    """A table's rows as sorted text tuples (row order and dtypes aside)."""
    text = table.astype(str)
    return sorted(map(tuple, text[sorted(text.columns)].to_numpy().tolist()))


def _recording(name: str):
    """The registered algorithm, keeping the release it makes (same behaviour)."""
    base = ALGORITHMS[name]

    class Recording(base):
        def anonymize(self, table, spec, rng):
            self.release_ = super().anonymize(table, spec, rng)
            return self.release_

    return Recording()


@pytest.mark.parametrize("name", ["mondrian", "lattice-optimal"])
def test_pipeline_utility_protocol_and_compare_make_the_same_training_release(
    tmp_path, name
):
    config = load_config(GERMAN).with_overrides(
        algorithm=name,
        output_dir=str(tmp_path / "out"),
        work_dir=str(tmp_path / "store"),
    )
    table = datasets.load("german")[list(config.released_columns)]
    original = compare_grid._sample(table.reset_index(drop=True), "credit", 300, 0)
    plan = pipeline.plan_release(config)
    test_size = plan.utility.test_size
    # The hold-out protocol's split (ppdm.utility.holdout.holdout_utility).
    train, test = train_test_split(
        original,
        test_size=test_size,
        stratify=original[config.target].astype(str),
        random_state=config.seed,
    )

    # 1. The pipeline's steps on the training split, read back from the CSV.
    store = plan.store
    clean = store.put_table(train.reset_index(drop=True), kind="clean-table")
    binned = discretize_step(plan.discretize, store, clean)
    candidate = anonymize_step(plan.anonymize, store, binned.discretized)
    released = pd.read_csv(
        candidate.tables["release"].path, dtype=str, keep_default_na=False
    )

    # 2. The utility report's hold-out protocol (the release's report).
    algorithm = _recording(name)
    utility_report(
        original,
        {"release": original},
        algorithm=algorithm,
        spec=plan.anonymize.spec(hierarchies_of(plan.utility.hierarchies)),
        discretize_settings=plan.utility.discretize,
        test_size=test_size,
        seed=config.seed,
        models=("naive_bayes",),
    )
    assert algorithm.release_.records_in == len(train)

    # 3. `ppdm compare`'s unit of work, given the same split.
    grid = C.plan_comparison(config, [config.k], algorithms=[name], table=original)
    unit = next(c for c in grid.candidates if c.algorithm == name)
    made = recipe.anonymize_training_split(
        compare_cell.recipe_of(grid, unit), train, test
    )

    expected = _rows(released)
    assert len(expected) > 0
    assert _rows(algorithm.release_.tables["release"]) == expected
    assert _rows(made.release.tables["release"]) == expected
    # The rule, seen in the data: a raw-input algorithm got ages unbinned.
    ages = made.train["age"]
    assert pd.api.types.is_numeric_dtype(ages) is recipe.takes_raw_numbers(name)
    # Nothing of the test split shaped the training split's cut points.
    assert made.test.index.equals(test.index)
