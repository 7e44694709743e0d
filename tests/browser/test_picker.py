"""The player picker: people first, then the levels weakest first, the
game-AI agents, and the experimental ones last, each with one line."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

SIZES = {"desktop": (1280, 800), "phone": (390, 844)}


@pytest.mark.parametrize("size", SIZES)
def test_the_picker_groups_people_and_levels_first(server, new_page, size):
    page = new_page(*SIZES[size])
    page.goto(server.url + "/")
    picker = page.locator("#player2")
    expect(picker.locator("optgroup")).to_have_count(4)
    groups = picker.locator("optgroup").evaluate_all("gs => gs.map(g => g.dataset.group)")
    assert groups == ["people", "level", "agent", "experimental"]
    levels = picker.locator('optgroup[data-group="level"] option').evaluate_all("os => os.map(o => o.value)")
    assert levels == ["random", "normal", "hard", "impossible", "master", "perfect"]
    first = picker.locator('optgroup[data-group="level"] option').first
    expect(first).to_contain_text("random - ")
    picker.select_option("master")
    expect(page.locator("#player2-options")).to_be_visible()
