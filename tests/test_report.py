"""`snakemake --report`: the HTML report of the tiny end-to-end run, and (when Chromium is installed)
a headless screenshot of it that must show a rendered page, not a blank one."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from test_workflow import TINY, snakemake, tiny_results

pytestmark = pytest.mark.timeout(600)

CHROMIUM = next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome") if shutil.which(n)), None)


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    results = tiny_results(tmp_path_factory)
    html = tmp_path_factory.mktemp("report") / "report.html"
    proc = snakemake("--report", html, "--configfile", TINY, "--config", f"results={results}", timeout=300)
    assert proc.returncode == 0, proc.stdout[-5000:]
    return html


def test_report_html(report):
    text = report.read_text(errors="replace")
    assert report.stat().st_size > 50_000
    assert text.lstrip().lower().startswith("<!doctype html") or "<html" in text[:2000].lower()
    # the workflow description, the table and every figure are in it
    assert "SIMULATED" in text
    assert "Fastest solver per graph" in text and "bellmanford_naive block-32" in text  # the landing page
    for name in ("summary.csv", "time_per_solver.png", "speedup.png", "tile_heatmap.png", "scaling.png",
                 "throughput.png"):
        assert name in text, name


def _distinct_colours(png) -> tuple[int, float]:
    """(number of distinct RGB colours, standard deviation of the grey levels) of a PNG."""
    import numpy as np

    try:
        from PIL import Image

        img = np.asarray(Image.open(png).convert("RGB"), dtype=np.uint8)
    except ImportError:
        import matplotlib.image

        img = (matplotlib.image.imread(png)[..., :3] * 255).astype(np.uint8)
    flat = img.reshape(-1, 3)
    colours = len(np.unique(flat[:, 0].astype(np.int64) << 16 | flat[:, 1].astype(np.int64) << 8 | flat[:, 2]))
    return colours, float(flat.mean(axis=1).std())


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (Debian: apt-get install -y "
                                             "--no-install-recommends chromium); the HTML itself is still tested")
def test_report_renders_in_headless_chromium(report, tmp_path):
    png = tmp_path / "report.png"
    cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
           "--disable-background-networking", "--disable-component-update", "--disable-sync",
           "--disable-dev-shm-usage", f"--user-data-dir={tmp_path / 'profile'}", "--hide-scrollbars",
           "--virtual-time-budget=15000", f"--screenshot={png}", "--window-size=1400,1000", report.as_uri()]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=180, cwd=tmp_path)
    assert png.exists(), f"no screenshot (exit {proc.returncode}):\n{proc.stderr[-3000:]}"
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    colours, spread = _distinct_colours(png)
    # a blank (white) page has 1 colour; the rendered report has text, a menu and coloured widgets
    assert colours > 50 and spread > 5, (colours, spread)
    print(f"screenshot: {png} ({colours} colours)")


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed; the HTML itself is still tested")
def test_report_opens_on_the_landing_table(report, tmp_path):
    """Rendered by Chromium (the report is a JavaScript app): its first page holds the results table."""
    cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-dev-shm-usage",
           f"--user-data-dir={tmp_path / 'profile'}", "--virtual-time-budget=15000", "--dump-dom", report.as_uri()]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=180, cwd=tmp_path)
    dom = proc.stdout
    assert "<table" in dom, f"no table on the first page (exit {proc.returncode}): {proc.stderr[-2000:]}"
    first = dom[dom.find("Fastest solver per graph"):]
    assert dom.count("Fastest solver per graph") >= 1 and "bellmanford_naive block-32" in first
    assert "SIMULATED" in first and "fastest CPU baseline" in first
