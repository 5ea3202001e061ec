"""benchmarks/ as a map: its README opens on the current table and indexes every write-up, every figure of the table is
printed in the write-up it cites, and every write-up names its archive by a checksum that matches the file.

The archives hold the raw data the write-ups name (see benchmarks/README.md); this test reads them whole once (about
7 MB of xz), to check their checksums and that the one-off scripts moved there are in them.
"""

from __future__ import annotations

import hashlib
import re
import tarfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BENCH = REPO / "benchmarks"
ARCHIVES = BENCH / "archive"
README = BENCH / "README.md"
WRITEUPS = sorted([*BENCH.glob("*.md"), *(BENCH / "papers").glob("*.md"), BENCH / "papers" / "native" / "README.md"])
WRITEUPS.remove(README)
# one-off scripts that made a write-up's tables, now in that write-up's archive (tests/benchmarks/test_benchmark_scripts.py)
ARCHIVED_SCRIPTS = {"sssp-road-h200": ["sssp_road_table.py"], "sssp-fast-h200": ["sssp_round_model.py"],
                    "sssp-peers-h200": ["h200/peers_table.py"], "sssp-cluster-h200": ["h200/cluster_micro.py"],
                    "papers-h200": ["papers/assemble.py"],
                    "papers-native-h200": ["papers/native/assemble.py", "h200/native-rest.sh", "h200/native-owed.sh"]}
RAW_LINE = re.compile(r"^\*\*Raw data\*\*: (?:\[`(?P<link>[^`]+)`\]\((?P=link)\) \(sha256 `(?P<sha>[0-9a-f]{64})`"
                      r"|none kept beyond)")


def sums() -> dict[str, str]:
    return {name: digest for digest, name in (line.split() for line in (ARCHIVES / "SHA256SUMS").read_text().splitlines())}


def section(text: str, title: str) -> str:
    """The text of the '## TITLE' section."""
    return text.split(f"\n## {title}\n", 1)[1].split("\n## ", 1)[0]


def table_rows(text: str) -> list[list[str]]:
    rows = [[c.strip() for c in line.strip().strip("|").split("|")] for line in text.splitlines() if line.startswith("|")]
    return rows[2:]  # past the header and its rule


def test_every_archive_matches_its_checksum_and_is_listed():
    listed = sums()
    assert sorted(listed) == sorted(p.name for p in ARCHIVES.glob("*.tar.xz"))
    for name, digest in listed.items():
        assert hashlib.sha256((ARCHIVES / name).read_bytes()).hexdigest() == digest, name


@pytest.mark.parametrize("path", WRITEUPS, ids=[p.relative_to(BENCH).as_posix() for p in WRITEUPS])
def test_a_write_up_opens_with_its_raw_data_line_and_the_right_checksum(path):
    lines = path.read_text().splitlines()
    assert lines[0].startswith("# ") and lines[1] == ""
    match = RAW_LINE.match(lines[2])
    assert match, f"{path.name}: line 3 should say where its raw data is: {lines[2][:120]}"
    if match["link"]:
        archive = (path.parent / match["link"]).resolve()
        assert archive.parent == ARCHIVES and archive.is_file()
        assert sums()[archive.name] == match["sha"]
    else:
        csv = re.search(r"\[`([\w.-]+\.csv)`\]", lines[2]).group(1)
        assert (path.parent / csv).is_file()


def test_the_scripts_moved_into_archives_are_in_them():
    for name, scripts in ARCHIVED_SCRIPTS.items():
        with tarfile.open(ARCHIVES / f"{name}.tar.xz") as tar:
            members = set(tar.getnames())
        assert set(scripts) <= members, name


def test_the_readme_opens_on_the_current_table():
    text = README.read_text()
    first = text.split("\n## ", 1)[1]
    assert first.startswith("The current table\n")
    rows = table_rows(section(text, "The current table"))
    problems = {r[0] for r in rows if r[0]}
    assert {"SSSP, one source", "SSSP, 1,024 sources at once"} <= problems
    assert any(p.startswith("APSP, dense") for p in problems) and any(p.startswith("APSP, sparse") for p in problems)
    assert {r[7] for r in rows} == {"H200"}  # one card: no row compares across cards


def test_every_median_of_the_table_is_printed_in_the_write_up_it_cites():
    rows = table_rows(section(README.read_text(), "The current table"))
    cited = None
    for row in rows:
        link = re.match(r"\[[\w/-]+\]\(([\w/.-]+\.md)\)", row[8])
        assert link or row[8] == "same run", row
        cited = (BENCH / link.group(1)) if link else cited
        median = re.match(r"[\d,.]+(?:-[\d.]+)?", row[3]).group(0)
        assert median in cited.read_text(), f"{row[1]}: {median} is not in {cited.name}"


def test_the_readme_indexes_every_write_up_and_links_only_to_what_exists():
    text = README.read_text()
    index = section(text, "The write-ups, by topic")
    linked = {(BENCH / m).resolve() for m in re.findall(r"\]\(([\w/.-]+\.md)\)", index)}
    assert linked == {p.resolve() for p in WRITEUPS}
    archives = {m for m in re.findall(r"\]\((archive/[\w.-]+\.tar\.xz)\)", index)}
    assert {Path(a).name for a in archives} == set(sums())
    for target in re.findall(r"\]\(([^)#\s]+)\)", text):
        assert (BENCH / target).exists(), target


def test_every_configuration_of_the_scale_benchmark_is_measured():
    """config/h200-sssp-scale.yaml's jobs (graph, solver, params) each have a row in sssp-scale-h200-solvers.csv, and
    so does every job of config/sweeps/sssp-scale-fill.yaml, the calls that measured what the earlier ones had not;
    what the planner skips (a solver's size limit) is recorded as skipped, not owed. ``auto`` has no row of its own:
    its answer is pooled with the row of the solver it picks (tests/solvers/test_auto.py judges the picks against the
    rows)."""
    import csv

    from gpusp.plan import expand_jobs, load_config

    def jobs(path):
        planned, skipped = expand_jobs(load_config(REPO / path))
        return ({(j.graph, j.solver, j.label) for j in planned if j.solver != "auto"},
                {(s["graph"], s["solver"], s["params"]) for s in skipped})

    wanted, skipped = jobs("config/h200-sssp-scale.yaml")
    filled, _ = jobs("config/sweeps/sssp-scale-fill.yaml")
    with (BENCH / "sssp-scale-h200-solvers.csv").open() as f:
        rows = {(r["graph"], r["solver"], r["params"]) for r in csv.DictReader(f) if r["status"] == "ok"}
    assert len(wanted) > 60 and skipped and filled
    assert not wanted - rows
    assert not filled - rows
