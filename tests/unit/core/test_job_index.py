"""core/job_index.py against a dict: the same answers under random puts and deletes,
pages made and dissolved, and memory that follows the live jobs, not the ids spent."""

from __future__ import annotations

import random

import pytest

from beanpod.core.engine import Engine
from beanpod.core.job import Job
from beanpod.core.job_index import PAGE, SPARSE, JobIndex


def _job(engine: Engine, job_id: int) -> Job:
    return Job(job_id, engine.default_tube, 0, 0, 1000, b"", 0)


def _agrees(index: JobIndex, model: dict[int, Job]) -> None:
    assert len(index) == len(model)
    assert list(index) == sorted(model)
    assert list(index.values()) == [model[i] for i in sorted(model)]
    assert list(index.items()) == sorted(model.items())


@pytest.mark.parametrize("seed", range(6))
def test_random_moves_agree_with_a_dict(seed: int) -> None:
    rng = random.Random(seed)
    engine, index, model = Engine(), JobIndex(), {}
    next_id = 1
    for _ in range(6000):
        roll = rng.random()
        if roll < 0.5:  # a put: the next id, sometimes a jump (ids spent elsewhere)
            next_id += rng.choice((1, 1, 1, 3, PAGE))
            model[next_id] = index_job = _job(engine, next_id)
            index[next_id] = index_job
        elif roll < 0.9 and model:  # a delete, oldest first more often than not
            keys = sorted(model)
            victim = keys[0] if rng.random() < 0.6 else rng.choice(keys)
            assert index.pop(victim) is model.pop(victim)
        else:  # lookups, present and absent
            probe = rng.randrange(0, next_id + 2 * PAGE)
            assert index.get(probe) is model.get(probe)
            assert (probe in index) == (probe in model)
    _agrees(index, model)


def test_a_job_put_below_the_top_after_its_page_went_is_found() -> None:
    engine, index = Engine(), JobIndex()
    for job_id in range(1, 3 * PAGE):
        index[job_id] = _job(engine, job_id)
    for job_id in range(1, PAGE):  # page 0 empties and goes (it is not the top)
        del index[job_id]
    old = _job(engine, 5)  # an explicit id (a restore, an extension) below the top page
    index[5] = old
    assert index[5] is old and 5 in index and len(index) == 2 * PAGE + 1
    assert index.pop(5) is old and index.get(5) is None
    with pytest.raises(KeyError):
        index[5]
    with pytest.raises(KeyError):
        del index[5]


def test_thinned_pages_are_dropped_and_their_jobs_kept() -> None:
    """FIFO churn with every 100th job left behind (buried): pages are dissolved as they
    thin out below SPARSE, the jobs left live on in the spill dict."""
    engine, index = Engine(), JobIndex()
    kept: dict[int, Job] = {}
    for job_id in range(1, 40 * PAGE):
        index[job_id] = job = _job(engine, job_id)
        if job_id % 100 == 0:
            kept[job_id] = job
        if job_id > PAGE and job_id - PAGE not in kept:
            del index[job_id - PAGE]  # the job put a page of ids ago is done
    assert len(index._pages) <= 3  # the top page and its neighbours, not one a 512 ids
    assert all(index[i] is job for i, job in kept.items())
    assert PAGE // 100 < SPARSE  # (what the churn above relies on)


def test_a_put_and_delete_loop_keeps_one_page() -> None:
    engine, index = Engine(), JobIndex()
    for job_id in range(1, 10 * PAGE):
        index[job_id] = _job(engine, job_id)
        del index[job_id]
    assert not index and len(index._pages) == 1 and not index._spill


def test_update_and_clear() -> None:
    engine, index = Engine(), JobIndex()
    jobs = {i: _job(engine, i) for i in (3, 700, 2)}
    index.update(jobs.items())
    _agrees(index, jobs)
    index.clear()
    _agrees(index, {})
