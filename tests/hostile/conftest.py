"""Hostile-input probes (issue 15): one test per probe, each tagged with what a person tried and
what memrag must do. When any probe runs, the session writes `docs/reliability.md`
(probe, expected, outcome), which the README's reliability section quotes.

Use it as a marker on each test:

    @pytest.mark.probe("upload: a 25 MB file", "refused with a size message, the rest kept", group="uploads")
    def test_big_upload(...): ...
"""

from __future__ import annotations

from pathlib import Path

import pytest

_REPORT = Path(__file__).resolve().parents[2] / "docs" / "reliability.md"
# Probes that live in browser tests or whole-page AppTests, kept by hand and appended to the page.
_ELSEWHERE = Path(__file__).resolve().parent / "probes_elsewhere.md"
_OUTCOMES: dict[str, dict] = {}
_PARTIAL = []  # a run that deselected probes (-k, -m, a single file) must not overwrite the page


def pytest_configure(config):
    config.addinivalue_line("markers", "probe(what, expected, group='other'): a hostile-input probe")


def pytest_deselected(items):
    if any(i.get_closest_marker("probe") for i in items):
        _PARTIAL.append(True)


def _probe_files_collected(session) -> bool:
    here = Path(__file__).resolve().parent
    wanted = {p.name for p in here.glob("test_*.py")}
    got = {Path(str(i.fspath)).name for i in session.items if Path(str(i.fspath)).parent == here}
    return wanted <= got


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    mark = item.get_closest_marker("probe")
    if mark is None:
        return
    if rep.when == "call" or (rep.when == "setup" and (rep.failed or rep.skipped)):
        what, expected = mark.args[:2]
        group = mark.kwargs.get("group", "other")
        status = "held" if rep.passed else ("skipped" if rep.skipped else "FAILED")
        _OUTCOMES[item.nodeid] = {"group": group, "what": what, "expected": expected, "outcome": status,
                                  "test": item.nodeid}


def pytest_sessionfinish(session, exitstatus):
    if not _OUTCOMES or _PARTIAL or not _probe_files_collected(session):
        return
    rows = sorted(_OUTCOMES.values(), key=lambda r: (r["group"], r["test"]))
    held = sum(r["outcome"] == "held" for r in rows)
    failed = sum(r["outcome"] == "FAILED" for r in rows)
    lines = [
        "# Reliability: hostile-input probes",
        "",
        "Written by `python3 -m pytest tests/hostile` (every probe is a test; this page is its last run).",
        "",
        f"**{len(rows)} probes: {held} held, {failed} failed, {len(rows) - held - failed} skipped.**",
        "",
        "| group | probe | expected | outcome | test |",
        "|---|---|---|---|---|",
    ]
    esc = lambda s: str(s).replace("|", "\\|").replace("\n", " ")  # noqa: E731
    for r in rows:
        lines.append(f"| {esc(r['group'])} | {esc(r['what'])} | {esc(r['expected'])} | {r['outcome']} | "
                     f"`{esc(r['test'].split('::')[-1])}` |")
    if _ELSEWHERE.is_file():
        lines += ["", _ELSEWHERE.read_text(encoding="utf-8").strip()]
    try:
        _REPORT.write_text("\n".join(lines) + "\n", encoding="utf-8")
    except OSError:
        pass  # a read-only checkout still runs the probes
