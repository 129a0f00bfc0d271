"""Measurement campaigns: load campaign files, run them, their metrics, executors and run tables."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from perfcast.io.run_table import RunTable
    from perfcast.measure.campaign import CampaignResult
    from perfcast.measure.spec import Campaign


def load_campaign(
    source: str | Path | Mapping[str, Any], overrides: Mapping[str, Any] | None = None
) -> Campaign:
    """A validated measurement campaign from a TOML file or a mapping of its keys.

    Parameters
    ----------
    source : str, Path or mapping
        The campaign file, or the campaign-file keys (``command``, ``parameters``, ...).
    overrides : mapping, optional
        Keys that replace the file's.

    Raises
    ------
    InputError
        Naming the file and line of anything wrong (unknown keys, bad ranges, a missing program).
    """
    from perfcast.measure.spec import campaign_from_mapping
    from perfcast.measure.spec import load_campaign as read_campaign

    if isinstance(source, Mapping):
        return campaign_from_mapping({**source, **(overrides or {})})
    return read_campaign(source, overrides=overrides)


def run_campaign(campaign: Campaign, *, retry_failed: bool = False) -> CampaignResult:
    """Take every run of a campaign not yet recorded in its results journal.

    Parameters
    ----------
    campaign : Campaign
        From :func:`load_campaign`.
    retry_failed : bool
        Also repeat runs that failed before.

    Returns
    -------
    CampaignResult
        The experiment so far, runs taken, skipped and failed.
    """
    from perfcast.measure.campaign import run_campaign as take_runs

    return take_runs(campaign, retry_failed=retry_failed)


def pending_runs(campaign: Campaign, *, retry_failed: bool = False) -> list[dict[str, Any]]:
    """The runs :func:`run_campaign` would take now, in order (point, repetition, mode and
    command line of each), without taking any."""
    from perfcast.measure.campaign import pending_runs as plan

    return plan(campaign, retry_failed)


def describe_failure(failure: Mapping[str, Any]) -> str:
    """One line about a failed run of :attr:`CampaignResult.failures`: point, repetition,
    mode, reason and the last line of its standard error."""
    from perfcast.measure.campaign import describe_failure as describe

    return describe(dict(failure))


def metric_modes() -> tuple[str, ...]:
    """The metric modes a campaign can measure in (``time``, ``instructions``, ``cache``)."""
    from perfcast.measure.spec import METRIC_MODES

    return METRIC_MODES


def campaign_executors() -> tuple[str, ...]:
    """Where a campaign's runs can execute: ``local`` or ``slurm`` (one batch job per run)."""
    from perfcast.measure.spec import EXECUTORS

    return EXECUTORS


def campaign_metrics() -> tuple[str, ...]:
    """Every metric a campaign may list: the metric modes and ``features`` (the records of a
    program built from ``perfcast features`` output, collected in the ``time`` runs)."""
    from perfcast.measure.spec import FEATURES_METRIC, METRIC_MODES

    return (*METRIC_MODES, FEATURES_METRIC)


def campaign_run_table(results_path: str | Path, *, phase: str = "exit") -> RunTable:
    """The run table of a campaign collecting ``features``, from its results journal.

    One row per successful ``time`` run: parameters, ``repetition``, features, their
    ``cost:`` columns, ``time`` (wall seconds) and ``cpu``; what :func:`learn` reads.

    Parameters
    ----------
    results_path : str or Path
        The campaign's ``<name>.results.jsonl``.
    phase : str
        ``exit`` or ``features_end`` (the early phase's features).

    Raises
    ------
    InputError
        Naming the journal for a campaign without features, no successful run, or runs of
        different builds.
    """
    from perfcast.io.campaign_runs import campaign_run_table as table_of

    return table_of(results_path, phase)
