"""Shared test setup: the repository root on sys.path, so `import mha` works."""

import os
import sys
from pathlib import Path

# Idle OpenMP threads spin while they wait for work; on a machine whose cores
# are shared (CI, a laptop running other things) that makes small torch ops
# many times slower. Passive waiting must be chosen before torch is imported.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
# The KaTeX distribution that `npm ci` installs (the plugin's default).
KATEX_DIST = ROOT / "node_modules" / "katex" / "dist"
