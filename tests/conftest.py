"""Every test runs with the job state table checked (production leaves it off: see
beanpod.core.job.TRANSITIONS): a move the table does not declare raises IllegalMove,
in process and in the `beanpod serve` processes the tests start."""

import os

from beanpod.core import job

job.CHECK_MOVES = True
os.environ["BEANPOD_CHECK_MOVES"] = "1"
