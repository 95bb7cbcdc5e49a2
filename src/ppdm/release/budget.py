"""A dataset's differential privacy budget, kept across its release series.

A differentially private release (an algorithm whose
:meth:`~ppdm.algorithms.base.Anonymizer.privacy_cost` is not None) records
what it spent, ``privacy_cost: {epsilon, delta}``, in its manifest (sealed by
the audit key) and in its keyed audit entry. Syntactic releases (k-anonymity,
l-diversity, ...) record nothing of the kind: they spend no epsilon and carry
no differential privacy guarantee.

The ledger of a dataset is read from the audit log only, and only once
:func:`~ppdm.release.audit.verify_audit_log` finds the log keyed and intact:
a spend edited in the log is tampering like any other edit, and an unkeyed
log, which anyone who can write the output directory could rewrite, is no
ledger at all.

What counts
-----------
Each release directory counts once, whatever number of entries record it:
a re-run that finds its own release (the same source, configuration and
seed give the same release id) is a ``republish`` of the same output and
spends nothing more; a release renamed into place by a run killed before its
entry was appended is recorded as ``recovered`` by the next opening of the
log, with the cost its sealed manifest names, so it counts (it is visible,
hence released). A run that fails or is killed before the rename publishes
nothing and spends nothing.

Composition
-----------
``basic`` (sequential composition): k releases at (eps_i, delta_i) are
(sum eps_i, sum delta_i)-differentially private together.

``advanced`` (Dwork, Rothblum and Vadhan, "Boosting and Differential
Privacy", FOCS 2010, Theorem III.3; Dwork and Roth 2014, Theorem 3.20): for
any delta' > 0 the k-fold adaptive composition is (eps', sum delta_i +
delta')-differentially private with

    eps' = sqrt(2 ln(1/delta') * sum eps_i^2) + sum eps_i (e^eps_i - 1),

which for k equal epsilons is the theorem's sqrt(2 k ln(1/delta')) eps +
k eps (e^eps - 1) (the same proof, Azuma's inequality on privacy losses each
bounded by its own eps_i, gives the heterogeneous form). Both bounds hold,
so with ``advanced`` the ledger keeps the basic one whenever it is no larger
in epsilon (its delta is then smaller too): advanced composition only pays
off over many releases of small epsilon.

Not covered: a release outside this output directory's audit log (another
output directory, a copy, an earlier export) is not on the ledger; the
budget is per dataset name, so renaming a dataset starts a new ledger; and
the syntactic releases of a dataset add nothing to it, although what they
reveal also adds up.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from ppdm.exceptions import AuditLogError, InfeasibleConstraintError
from ppdm.privacy.differential import PrivacyCost
from ppdm.release import audit, audit_log
from ppdm.release.keys import MissingKeyError

__all__ = [
    "BUDGET_FIELD",
    "COST_FIELD",
    "Budget",
    "BudgetCheck",
    "BudgetExceededError",
    "DatasetLedger",
    "Publication",
    "Spend",
    "check_budget",
    "check_before_run",
    "compose",
    "compose_advanced",
    "compose_basic",
    "ledger_from_entries",
    "publication",
    "read_ledger",
]

#: The field of a manifest and an audit entry that records a release's spend.
COST_FIELD = "privacy_cost"
#: ... and the budget it was published under (what ``ppdm budget`` reports
#: remaining against).
BUDGET_FIELD = "privacy_budget"

Composition = Literal["basic", "advanced"]


class BudgetExceededError(InfeasibleConstraintError):
    """A release would spend more than its dataset's privacy budget has left."""


@dataclass(frozen=True)
class Budget:
    """A dataset's total (epsilon, delta) and how spends compose.

    ``delta_prime`` is the slack of advanced composition (required for it,
    part of the composed delta).
    """

    epsilon: float
    delta: float = 0.0
    composition: Composition = "basic"
    delta_prime: float | None = None

    @classmethod
    def from_config(cls, section: Mapping[str, Any]) -> Budget:
        return cls(
            float(section["epsilon"]),
            float(section.get("delta", 0.0)),
            section.get("composition", "basic"),
            section.get("delta_prime"),
        )

    def describe(self) -> str:
        how = self.composition + " composition"
        if self.composition == "advanced":
            how += f", delta'={self.delta_prime:g}"
        return f"epsilon={self.epsilon:g}, delta={self.delta:g} ({how})"


@dataclass(frozen=True)
class Spend:
    """One release of a dataset on the ledger (``cost`` None: not differentially private)."""

    release_dir: str
    release_id: str
    seq: int
    created_at: str | None
    algorithm: str | None
    cost: PrivacyCost | None


@dataclass
class DatasetLedger:
    """What the audit log records of one dataset's releases.

    ``dp`` lists the differentially private releases (each once, in the
    order they were first recorded); ``non_dp`` the releases that spent no
    epsilon (and carry no differential privacy guarantee). ``budget`` is the
    budget the latest differentially private release was published under
    (None: none recorded).
    """

    dataset: str
    dp: list[Spend] = field(default_factory=list)
    non_dp: list[Spend] = field(default_factory=list)
    budget: Budget | None = None

    def costs(self) -> list[PrivacyCost]:
        return [s.cost for s in self.dp if s.cost is not None]

    def spent(
        self, composition: Composition = "basic", delta_prime: float | None = None
    ) -> tuple[float, float]:
        return compose(self.costs(), composition, delta_prime)

    def holds(self, release_dir: str) -> bool:
        return any(s.release_dir == release_dir for s in self.dp)


def compose_basic(costs: Iterable[PrivacyCost]) -> tuple[float, float]:
    """Sequential composition: the sums of the epsilons and of the deltas."""
    costs = list(costs)
    return math.fsum(c.epsilon for c in costs), math.fsum(c.delta for c in costs)


def compose_advanced(
    costs: Iterable[PrivacyCost], delta_prime: float
) -> tuple[float, float]:
    """Advanced composition (Dwork, Rothblum, Vadhan 2010), heterogeneous form.

    Returns ``(sqrt(2 ln(1/delta') sum eps_i^2) + sum eps_i (e^eps_i - 1),
    sum delta_i + delta')``; no release spends nothing.
    """
    if not 0.0 < delta_prime < 1.0:
        raise ValueError(f"delta' must be in (0, 1), got {delta_prime!r}")
    costs = list(costs)
    if not costs:
        return 0.0, 0.0
    squares = math.fsum(c.epsilon**2 for c in costs)
    drift = math.fsum(c.epsilon * math.expm1(c.epsilon) for c in costs)
    epsilon = math.sqrt(2.0 * math.log(1.0 / delta_prime) * squares) + drift
    return epsilon, math.fsum(c.delta for c in costs) + delta_prime


def compose(
    costs: Iterable[PrivacyCost],
    composition: Composition = "basic",
    delta_prime: float | None = None,
) -> tuple[float, float]:
    """The (epsilon, delta) the releases of ``costs`` spend together.

    ``advanced`` keeps the basic bound where it is no larger in epsilon.
    """
    costs = list(costs)
    basic = compose_basic(costs)
    if composition == "basic":
        return basic
    if composition != "advanced":
        raise ValueError(f"composition must be basic or advanced, got {composition!r}")
    if delta_prime is None:
        raise ValueError("advanced composition needs delta_prime")
    advanced = compose_advanced(costs, delta_prime)
    return basic if basic[0] <= advanced[0] else advanced


def _cost(entry: Mapping[str, Any]) -> PrivacyCost | None:
    recorded = entry.get(COST_FIELD)
    if recorded is None:
        return None
    try:
        return PrivacyCost(float(recorded["epsilon"]), float(recorded["delta"]))
    except (TypeError, KeyError, ValueError) as err:
        raise AuditLogError(
            f"audit entry seq={entry.get('seq')}: {COST_FIELD} {recorded!r} is not "
            f"an (epsilon, delta) ({err})"
        ) from None


def ledger_from_entries(
    entries: Sequence[Mapping[str, Any]],
) -> dict[str, DatasetLedger]:
    """Every dataset's ledger from audit entries (checked by the caller), by name."""
    first: dict[str, Mapping[str, Any]] = {}
    costs: dict[str, PrivacyCost] = {}
    budgets: dict[str, Budget] = {}
    for entry in entries:
        if entry.get("event") not in audit.RELEASE_EVENTS:
            continue
        release_dir = entry.get("release_dir")
        if not isinstance(release_dir, str):
            continue
        first.setdefault(release_dir, entry)
        cost = _cost(entry)
        if cost is not None:
            # One release, one cost; should two entries disagree, the larger
            # counts (never less than any record says).
            held = costs.get(release_dir)
            costs[release_dir] = (
                cost
                if held is None
                else PrivacyCost(
                    max(held.epsilon, cost.epsilon), max(held.delta, cost.delta)
                )
            )
        if isinstance(entry.get(BUDGET_FIELD), Mapping):
            try:
                budgets[_dataset(entry, release_dir)] = Budget.from_config(
                    entry[BUDGET_FIELD]
                )
            except (KeyError, TypeError, ValueError):
                pass  # a budget is what the configuration says; this one is a note
    ledgers: dict[str, DatasetLedger] = {}
    for release_dir, entry in first.items():
        dataset = _dataset(entry, release_dir)
        ledger = ledgers.setdefault(
            dataset, DatasetLedger(dataset, budget=budgets.get(dataset))
        )
        recorded = Spend(
            release_dir,
            str(entry.get("release_id") or Path(release_dir).name),
            int(entry.get("seq", -1)),
            entry.get("created_at"),
            entry.get("algorithm"),
            costs.get(release_dir),
        )
        (ledger.dp if recorded.cost is not None else ledger.non_dp).append(recorded)
    return ledgers


def _dataset(entry: Mapping[str, Any], release_dir: str) -> str:
    return str(entry.get("dataset") or Path(release_dir).parent.name)


def read_ledger(
    out_dir: Path | str, *, key: audit.KeyArg = audit.DEFAULT_AUDIT_KEY
) -> dict[str, DatasetLedger]:
    """The ledgers of the releases in ``out_dir``, from its verified keyed audit log.

    No log (nothing released there yet): no ledger, ``{}``.

    Raises
    ------
    AuditLogError
        The log is unkeyed, or :func:`~ppdm.release.audit.verify_audit_log`
        finds it tampered with (its first problem is named), or no key at
        hand can check it.
    """
    out_dir = Path(out_dir)
    log_path = out_dir / audit.AUDIT_LOG_NAME
    if not log_path.exists() and not audit_log._release_dirs(out_dir):
        return {}
    report = audit.verify_audit_log(out_dir, key=key)
    if report.unkeyed:
        raise AuditLogError(
            f"{log_path} is UNKEYED: a privacy budget read from it could have "
            "been rewritten by anyone who can write the output directory; set "
            "PPDM_AUDIT_KEY before publishing (see SECURITY.md)"
        )
    if not report.ok:
        raise AuditLogError(
            f"{log_path} was tampered with, no privacy budget is read from it: "
            f"{report.broken}"
        )
    return ledger_from_entries(audit.read_entries(log_path))


def check_budget(
    ledger: DatasetLedger | None,
    dataset: str,
    budget: Budget,
    asked: PrivacyCost,
    where: str,
    then: str,
) -> None:
    """Raise :class:`BudgetExceededError` (one line) if ``asked`` overruns ``budget``.

    ``where`` names the audit log, ``then`` what happens now ("nothing was
    run", "nothing was published").
    """
    costs = ledger.costs() if ledger is not None else []
    spent = compose(costs, budget.composition, budget.delta_prime)
    total = compose([*costs, asked], budget.composition, budget.delta_prime)
    # A sum of floats equal to the budget must fit (0.1 + 0.2 against 0.3).
    slack = 1e-12
    if total[0] <= budget.epsilon * (1 + slack) and total[1] <= budget.delta + slack:
        return
    remaining = (max(budget.epsilon - spent[0], 0.0), max(budget.delta - spent[1], 0.0))
    composed = (
        f"; composed with it the series would spend epsilon={total[0]:.6g}, "
        f"delta={total[1]:.6g}"
        if budget.composition == "advanced"
        else ""
    )
    raise BudgetExceededError(
        f"privacy budget of dataset {dataset!r} exceeded: spent epsilon="
        f"{spent[0]:.6g}, delta={spent[1]:.6g} by {len(costs)} differentially "
        f"private release(s) in {where}; asked epsilon={asked.epsilon:.6g}, "
        f"delta={asked.delta:.6g}; remaining epsilon={remaining[0]:.6g}, "
        f"delta={remaining[1]:.6g} of privacy_budget {budget.describe()}"
        f"{composed}; {then}: lower the algorithm's epsilon (or delta) or raise "
        "privacy_budget"
    )


def check_before_run(
    out_dir: Path | str,
    dataset: str,
    budget: Budget,
    cost: PrivacyCost,
    *,
    key: audit.KeyArg = audit.DEFAULT_AUDIT_KEY,
    rerun_of: Callable[[Mapping[str, Any]], bool] | None = None,
) -> None:
    """The pre-flight: refuse, before any step, a release ``budget`` cannot pay for.

    ``rerun_of(manifest)`` says whether this run would make the release of
    that manifest again (same source, same configuration): a re-run after a
    kill that left its release published finds it and spends nothing, so it
    is let through; publication checks again under the lock (a run whose
    randomness is not replayed makes another release, and is refused there).

    Raises
    ------
    MissingKeyError
        No audit key is at hand (the spend could not be recorded in a keyed
        entry).
    AuditLogError
        The log is unkeyed or tampered with.
    BudgetExceededError
        Spent and asked together exceed the budget (one line: spent, asked,
        remaining).
    """
    signer = audit.audit_key(key)
    if signer.key is None:
        raise MissingKeyError(
            f"privacy_budget needs a keyed audit log in {out_dir}, and "
            f"{signer.source} holds no key: set it (see SECURITY.md); nothing was run"
        )
    ledger = read_ledger(out_dir, key=key).get(dataset)
    where = str(Path(out_dir) / audit.AUDIT_LOG_NAME)
    try:
        check_budget(ledger, dataset, budget, cost, where, "nothing was run")
    except BudgetExceededError:
        if ledger is None or rerun_of is None:
            raise
        for spend in ledger.dp:
            manifest = json.loads(
                (Path(out_dir) / spend.release_dir / "manifest.json").read_bytes()
            )
            if rerun_of(manifest):
                return
        raise


@dataclass(frozen=True)
class BudgetCheck:
    """Refuse a release its dataset's budget cannot pay for, on the locked log.

    Called by :func:`~ppdm.release.publish.publish_directory` under the audit
    log's lock, on the entries as they are then (recoveries recorded): two
    runs that each passed the pre-flight cannot overrun the budget together.
    A class, not a closure, so a publication's arguments can be pickled.
    """

    dataset: str
    budget: Budget
    cost: PrivacyCost

    def __call__(self, log: audit.AuditLog, release_dir: str) -> None:
        if log.signer.key is None:
            raise MissingKeyError(
                f"{log.path}: privacy_budget needs a keyed audit log, and "
                f"{log.signer.source} holds no key; nothing was published"
            )
        problems = audit.chain_problems(log.out_dir, log.entries, log.keys)
        if problems:
            raise AuditLogError(
                f"{log.path} was tampered with, no privacy budget is read from "
                f"it: {problems[0]}; nothing was published"
            )
        ledger = ledger_from_entries(log.entries).get(self.dataset)
        if ledger is not None and ledger.holds(release_dir):
            return  # the same release again: nothing more is spent
        check_budget(
            ledger,
            self.dataset,
            self.budget,
            self.cost,
            str(log.path),
            "nothing was published",
        )


@dataclass(frozen=True)
class Publication:
    """What a release adds to its manifest and entry, and its check under the log's lock.

    ``fields`` is empty for a release that spends no epsilon.
    """

    fields: dict[str, Any]
    check: Callable[[audit.AuditLog, str], None] | None = None


def publication(
    algorithm: str,
    params: Mapping[str, Any],
    evidence_path: Path | str,
    dataset: str,
    budget: Mapping[str, Any] | None,
) -> Publication:
    """The spend of a release about to be published, from its anonymization evidence.

    The cost is the algorithm's :meth:`privacy_cost` for the rows it was run
    on (``records_in`` of the evidence); with a budget, the publication
    carries a :class:`BudgetCheck`.
    """
    from ppdm.algorithms import get_algorithm

    evidence = json.loads(Path(evidence_path).read_bytes())
    cost = get_algorithm(algorithm, **dict(params)).privacy_cost(
        int(evidence["records_in"])
    )
    if cost is None:
        return Publication({})
    fields = {COST_FIELD: cost.as_dict()}
    if budget is None:
        return Publication(fields)
    fields[BUDGET_FIELD] = dict(budget)
    return Publication(fields, BudgetCheck(dataset, Budget.from_config(budget), cost))
