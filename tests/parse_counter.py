"""Counts how often a configuration is read from YAML and validated, in every thread.

It watches the real code run through :func:`sys.setprofile` (and
:func:`threading.setprofile` for the threads started meanwhile): the YAML
reader's duplicate-key check runs once a document read, and
``ReleaseConfig``'s whole-release check once a validation. Nothing is
replaced.
"""

from __future__ import annotations

import sys
import threading

from ppdm.config import ReleaseConfig, yaml_file


class ParseCounter:
    """Counts YAML documents read and configurations validated, in every thread."""

    def __init__(self) -> None:
        validators = ReleaseConfig.__pydantic_decorators__.model_validators
        self._codes = {
            yaml_file._check_unique_keys.__code__: "yaml",
            validators["_consistent"].func.__code__: "validated",
        }
        self.counts = {"yaml": 0, "validated": 0}

    def _profile(self, frame, event, arg):  # noqa: ARG002 - sys.setprofile's signature
        if event == "call" and frame.f_code in self._codes:
            self.counts[self._codes[frame.f_code]] += 1

    def __enter__(self) -> ParseCounter:
        self._previous = sys.getprofile()
        sys.setprofile(self._profile)
        threading.setprofile(self._profile)
        return self

    def __exit__(self, *exc) -> None:
        sys.setprofile(self._previous)
        threading.setprofile(None)  # type: ignore[arg-type]
