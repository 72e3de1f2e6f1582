"""Every ```python block of docs/PYTHON.md and README.md runs (from the repository's root)."""

import re

import pytest

from conftest import REPO

DOC = REPO / "docs" / "PYTHON.md"
PAGES = [DOC, REPO / "README.md"]
BLOCKS = [
    (page, block)
    for page in PAGES
    for block in re.findall(r"^```python\n(.*?)^```", page.read_text(), flags=re.S | re.M)
]


def test_the_page_has_code():
    assert sum(page == DOC for page, _ in BLOCKS) >= 4


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_block_runs(index, monkeypatch):
    monkeypatch.chdir(REPO)
    page, block = BLOCKS[index]
    code = compile(block, f"{page.name}:block{index + 1}", "exec")
    exec(code, {"__name__": f"docs_block_{index + 1}"})


def test_the_agent_is_fifteen_lines():
    agent = next(b for _, b in BLOCKS if "def choose" in b)
    lines = [line for line in agent.splitlines() if line.strip()]
    assert len(lines) <= 15, len(lines)
