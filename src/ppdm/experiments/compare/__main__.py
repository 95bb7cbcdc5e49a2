"""``python -m ppdm.experiments.compare docs DIR... --out docs/compare``."""

from ppdm.experiments.compare.pages import main

raise SystemExit(main())
