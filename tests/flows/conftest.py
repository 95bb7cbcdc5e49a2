"""One throwaway Prefect backend for every flow test of the session."""

from __future__ import annotations

import pytest
from prefect.testing.utilities import prefect_test_harness


@pytest.fixture(scope="session")
def prefect_backend():
    with prefect_test_harness(server_startup_timeout=120):
        yield
