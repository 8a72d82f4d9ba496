"""The demo check's last item: every page of the app renders without an exception."""

from __future__ import annotations

from pathlib import Path


def render_pages(root: Path) -> str:
    """Render every page once, bare (streamlit.testing); the first exception fails the check."""
    from streamlit.testing.v1 import AppTest

    done = []
    # Pages live in app_pages/, not pages/: a pages/ folder would make Streamlit add its own
    # navigation beside st.navigation's.
    for page in sorted((root / "app_pages").glob("*.py")):
        at = AppTest.from_file(str(page), default_timeout=120)
        at.run()
        if at.exception:
            raise RuntimeError(f"{page.name}: {at.exception[0].message}")
        done.append(page.stem)
    if not done:
        raise FileNotFoundError("no pages found")
    return "rendered without errors: " + ", ".join(done)
