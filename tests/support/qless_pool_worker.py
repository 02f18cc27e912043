"""One process of the restart tests' worker pool: `python -m tests.support.qless_pool_worker
PORT NAME LOG` works queue `work` with beanpod.client.qless's Worker, appends each jid it
performs to LOG, and stops on SIGTERM. It never gives up reconnecting."""

from __future__ import annotations

import logging
import sys
import time

from beanpod.client.qless import Backoff, Client, Job
from beanpod.client.qless_worker import Worker


def main() -> None:
    port, name, log_path = int(sys.argv[1]), sys.argv[2], sys.argv[3]
    logging.basicConfig(level=logging.WARNING, format=f"{name} %(levelname)s %(message)s")
    backoff = Backoff(maximum=0.5, give_up_after=None)

    def connect() -> Client:
        return Client(port=port, worker_name=name, backoff=backoff, timeout=60)

    def perform(job: Job) -> None:
        time.sleep(0.01)  # long enough to be in flight when the server goes away
        with open(log_path, "a") as log:
            log.write(job.jid + "\n")

    worker = Worker(connect, ["work"], perform, interval=0.05)
    worker.install_signals()
    worker.run()


if __name__ == "__main__":
    main()
