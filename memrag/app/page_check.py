"""The demo check's last item: every page of the app renders without an exception, run the way
`streamlit run app.py` runs it (inside app.py's st.navigation, with its sidebar)."""

from __future__ import annotations

import os
from pathlib import Path

ENTRY = "app.py"
PAGES_DIR = "app_pages"


def render_pages(root: Path) -> str:
    """Open app.py once, then switch to every page in app_pages/ and render it; the first exception
    fails the check. A page rendered bare (AppTest.from_file on the page itself) is not how the app
    runs it: st.page_link and st.switch_page then find no registered pages and raise."""
    from streamlit import config as st_config
    from streamlit.testing.v1 import AppTest

    pages = sorted((root / PAGES_DIR).glob("*.py"))
    if not pages:
        raise FileNotFoundError(f"no pages found in {root / PAGES_DIR}")
    previous = os.environ.get("MEMRAG_PRELOAD")
    os.environ["MEMRAG_PRELOAD"] = "0"  # a check must not start loading a 2 GB model as a side effect
    # the check reports to the operator's terminal, never to a page: it names the page's real error
    # even where room mode (process-wide) redacts errors for viewers
    details = st_config.get_option("client.showErrorDetails")
    st_config.set_option("client.showErrorDetails", "full")
    try:
        at = AppTest.from_file(str(root / ENTRY), default_timeout=120)
        at.run()
        _raise_first(at, ENTRY)
        for page in pages:
            at.switch_page(f"{PAGES_DIR}/{page.name}")
            at.run()
            _raise_first(at, page.name)
    finally:
        st_config.set_option("client.showErrorDetails", details)
        if previous is None:
            os.environ.pop("MEMRAG_PRELOAD", None)
        else:
            os.environ["MEMRAG_PRELOAD"] = previous
    return "rendered without errors through app.py: " + ", ".join(p.stem for p in pages)


def _raise_first(at: object, where: str) -> None:
    exceptions = at.exception  # type: ignore[attr-defined]
    if exceptions:
        raise RuntimeError(f"{where}: {exceptions[0].message}")
