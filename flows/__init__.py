"""Prefect flows of the release pipeline."""
