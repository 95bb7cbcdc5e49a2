# Offline settings for Prefect (see ../shared/STACK.md section 2); sourced by .ci/run.
export PREFECT_HOME="${PREFECT_HOME:-$PWD/.prefect}"
export PREFECT_SERVER_ANALYTICS_ENABLED=false
export DO_NOT_TRACK=1
export PREFECT_SERVER_UI_SHOW_PROMOTIONAL_CONTENT=false
export PREFECT_CLOUD_ENABLE_ORCHESTRATION_TELEMETRY=false
export PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS=120
export PREFECT_LOGGING_EXTRA_LOGGERS=ppdm
export UV_PYTHON_DOWNLOADS=never
export MPLBACKEND=Agg
export MPLCONFIGDIR="$PREFECT_HOME/matplotlib"
unset PREFECT_API_URL
# A server started from this shell serves its UI the API address given here
# (README runbook: set it to the port the server listens on).
unset PREFECT_UI_API_URL
export PREFECT_LOGGING_TO_API_WHEN_MISSING_FLOW=ignore
