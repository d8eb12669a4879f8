"""Importing the package leaves the process as it found it.

An environment variable set at import time changes libraries the user loads afterwards:
``OMP_WAIT_POLICY``, for one, is read by whichever OpenMP runtime starts next, so torch's
threads in the same process would sleep between its many small parallel regions.
"""

from __future__ import annotations

import json
import subprocess
import sys

from tests import ROOT

PROBE = """
import json, os
import gymnasium, numba, numpy, pettingzoo  # the dependencies set what they set
before = dict(os.environ)
import patchwork_env
from patchwork_env import GameBatch
GameBatch.new(300, seed=0).playout(0)  # a batch large enough for the threaded kernels
after = dict(os.environ)
print(json.dumps({k: [before.get(k), after.get(k)] for k in set(before) | set(after)
                  if before.get(k) != after.get(k)}))
"""


def test_importing_and_playing_sets_no_environment_variable_of_its_own() -> None:
    done = subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.strip().splitlines()[-1]) == {}
