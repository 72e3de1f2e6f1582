"""Every ```python block of docs/PYTHON.md and README.md runs (from the repository's root)."""

import re

import pytest

from conftest import REPO, require_module

DOC = REPO / "docs" / "PYTHON.md"
PAGES = [DOC, REPO / "README.md"]
BLOCKS = [
    (page, block)
    for page in PAGES
    for block in re.findall(r"^```python\n(.*?)^```", page.read_text(), flags=re.S | re.M)
]


def test_the_page_has_code():
    assert sum(page == DOC for page, _ in BLOCKS) >= 4


# Blocks of the adapters need their optional libraries (skipped with a
# notice without them, failed under GGPNET_REQUIRE_EXTRAS=1).
EXTRAS = {"pyspiel": "open_spiel", "pettingzoo": "pettingzoo", "gymnasium": "gymnasium", "ray": "ray"}


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_block_runs(index, monkeypatch):
    monkeypatch.chdir(REPO)
    page, block = BLOCKS[index]
    for module, package in EXTRAS.items():
        if re.search(rf"\b{module}\b", block):
            require_module(module, package)
    code = compile(block, f"{page.name}:block{index + 1}", "exec")
    exec(code, {"__name__": f"docs_block_{index + 1}"})


def test_the_agent_is_fifteen_lines():
    agent = next(b for _, b in BLOCKS if "def choose" in b)
    lines = [line for line in agent.splitlines() if line.strip()]
    assert len(lines) <= 15, len(lines)
