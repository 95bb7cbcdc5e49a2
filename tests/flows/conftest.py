"""Flow tests share the session's Prefect backend of ``tests/conftest.py``.

(``prefect_backend``: one harness for ``tests/flows`` and ``tests/e2e``
together; ``prefect_api_url``: its address, for ``ppdm`` run as a subprocess.)
"""
