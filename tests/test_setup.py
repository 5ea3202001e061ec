"""The README's set-up: `make run` installs what the workflow needs (the CUDA wheels only beside a GPU), `make test`
everything CI needs, and the README says how to reach the installed commands."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")


def planned(target: str, tmp_path, gpu: bool) -> str:
    """What `make -n TARGET` would pip install into a fresh environment folder, with or without an nvidia-smi on
    PATH."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(parents=True, exist_ok=True)
    if gpu:
        fake = bin_dir / "nvidia-smi"
        fake.write_text("#!/bin/sh\nexit 0\n")
        fake.chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}:/usr/bin:/bin"}
    done = subprocess.run(["make", "-n", "-C", str(REPO), target, f"VENV={tmp_path / 'venv'}"], env=env,
                          capture_output=True, text=True, check=True)
    return "\n".join(line.split("pip install ", 1)[1] for line in done.stdout.splitlines() if "pip install " in line)


def test_make_run_installs_the_cuda_wheels_only_beside_a_gpu(tmp_path):
    without = planned("run", tmp_path / "a", gpu=False)
    assert without.endswith('-q -e ".[workflow]"')
    assert planned("run", tmp_path / "b", gpu=True).endswith('-q -e ".[workflow,cu13]"')
    assert planned("test", tmp_path / "c", gpu=False).endswith('-q -e ".[cu13,workflow,test]"')


def test_the_readme_says_how_to_reach_the_installed_commands():
    text = " ".join((REPO / "README.md").read_text().split())
    assert ". .venv/bin/activate" in text and "make report" in text


def test_config_readme_names_every_shipped_config_and_its_write_up():
    text = (REPO / "config" / "README.md").read_text()
    named = {line.split("`")[1] for line in text.splitlines() if line.startswith("| `")}
    assert named == {p.name for p in (REPO / "config").glob("*.yaml")}
    for write_up in {part.split("`")[0] for part in text.split("`benchmarks/")[1:]} - {""}:
        assert (REPO / "benchmarks" / write_up).is_file(), write_up
    for folder in ("experiments", "sweeps"):
        assert (REPO / "config" / folder / "README.md").is_file() and f"`{folder}/`" in text


def test_listings_open_with_their_column_names(capsys):
    from gpusp import cli

    assert cli.main(["solvers", "--problem", "apsp"]) == 0
    first, second = capsys.readouterr().out.splitlines()[:2]
    assert first.split()[:4] == ["solver", "problem", "device", "paper"] and second.split()[1:3] == ["apsp", "gpu"]


def test_generate_help_lists_every_kind_with_its_parameters(capsys):
    from gpusp import cli
    from gpusp.data.generate import GENERATORS

    with pytest.raises(SystemExit):
        cli.main(["generate", "--help"])
    listing = capsys.readouterr().out.split("(a bare name is required):\n", 1)[1].splitlines()
    assert [line.split()[0] for line in listing] == list(GENERATORS)
    assert "  kron      scale edge_factor=16 seed=0 wmin=1 wmax=255 offsets=auto" in listing


def test_datasets_list_says_where_a_copy_already_is(tmp_path, capsys):
    from gpusp import cli
    from gpusp.data import datasets

    ny, bay = datasets.get_dataset("USA-road-d.NY"), datasets.get_dataset("USA-road-d.BAY")
    (tmp_path / "mirror").mkdir()
    (tmp_path / "dl").mkdir()
    (tmp_path / "mirror" / ny["filename"]).write_bytes(b"x")
    (tmp_path / "dl" / bay["filename"]).write_bytes(b"x")
    assert cli.main(["datasets", "list", "--dest", str(tmp_path / "dl"), "--mirror", str(tmp_path / "mirror")]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split()[:6] == ["dataset", "kind", "fmt", "vertices", "arcs", "here"]
    here = {line.split()[0]: line.split()[7] for line in lines[1:]}  # after n= N m= M
    assert here["USA-road-d.NY"] == "mirror" and here["USA-road-d.BAY"] == "downloaded"
    assert here["USA-road-t.NY"] == "-"


def test_long_parses_and_generations_say_how_far_they_got(tmp_path, monkeypatch, capsys):
    from gpusp.data import gap_synthetic, textblocks
    from gpusp.data.formats import read_graph, write_graph
    from gpusp.data.generate import generate

    monkeypatch.setattr(gap_synthetic, "PROGRESS_SCALE", 8)
    graph = generate("kron", scale=8, seed=1)
    stages = capsys.readouterr().err.splitlines()
    said = [line.split(": ", 2)[2].rsplit(" (", 1)[0] for line in stages]
    assert said[0] == f"{16 * 256:,} edges drawn" and said[1].endswith(" arcs placed by source, with their weights")
    assert said[2] == f"made simple: {graph.m:,} arcs kept" and said[3] == "CSR arrays written"
    assert all(line.startswith("gpusp: kron scale 8: ") for line in stages)
    path = tmp_path / "k.gr"
    write_graph(graph, path)
    monkeypatch.setattr(textblocks, "PROGRESS_ARCS", 1)
    monkeypatch.setattr(textblocks, "BLOCK_BYTES", 4096)  # several blocks, so the lines come as they go
    assert read_graph(path).m == graph.m
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) >= 3 and all(line.startswith(f"gpusp: parsing {path}: ") for line in lines)
    assert lines[-1].split(": ")[2].startswith(f"{graph.m:,} of {graph.m:,} arcs (100 %")
    generate("kron", scale=7, seed=1)  # below the threshold: quiet
    assert capsys.readouterr().err == ""
