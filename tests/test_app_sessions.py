"""Background jobs belong to the browser session that started them."""

from __future__ import annotations

import threading

from memrag.app import job_owner, jobs


def test_a_session_sees_its_own_jobs_and_orphans_but_not_another_open_sessions(monkeypatch):
    release = threading.Event()
    alive = {"A": True, "B": True}
    monkeypatch.setattr(job_owner, "_session_alive", lambda sid: alive[sid])
    started = {}
    for sid in ("A", "B"):
        monkeypatch.setattr(job_owner, "session_id", lambda sid=sid: sid)
        started[sid] = job_owner.start_job("build", f"build of {sid}", lambda job: release.wait(10))
    try:
        assert started["A"].meta["session"] == "A"
        monkeypatch.setattr(job_owner, "session_id", lambda: "A")
        mine = {j.id for j in job_owner.visible_jobs("build", running_only=True)}
        assert started["A"].id in mine and started["B"].id not in mine
        alive["B"] = False  # B's tab was closed: its build can be followed from another tab
        assert started["B"].id in {j.id for j in job_owner.visible_jobs("build", running_only=True)}
    finally:
        release.set()
        for job in started.values():
            job.wait(10)
    assert all(j.status == jobs.DONE for j in started.values())
