"""The generation box's fields as a reader uses them (review of this round).

Its temperature starts valid and the arrow keys move it by 0.1; a run that
cannot start (a named problem) leaves no text of an earlier run under it.
"""

from __future__ import annotations

from test_model_in_page import BOX, opened, tab, write  # noqa: F401 (fixtures)
from test_site import browser, in_browser, server, site  # noqa: F401 (fixtures)


@in_browser
def test_the_temperature_is_valid_and_steps_by_a_tenth(tab):  # noqa: F811
    page = opened(tab)
    temperature = page.locator(f"{BOX} input[type=number]").nth(1)
    assert temperature.input_value() == "0.8"
    assert temperature.evaluate("e => e.validity.valid")
    temperature.focus()
    page.keyboard.press("ArrowUp")
    assert temperature.input_value() == "0.9"
    page.keyboard.press("ArrowDown")
    page.keyboard.press("ArrowDown")
    assert temperature.input_value() == "0.7"
    assert temperature.evaluate("e => e.validity.valid")


@in_browser
def test_a_run_that_cannot_start_clears_the_last_text(tab):  # noqa: F811
    page = opened(tab)
    write(page, 20, top_k=1)
    assert page.inner_text(".lit-model-output").startswith("ROMEO:")
    page.fill(f"{BOX} input[type=text]", "ж")  # not in the vocabulary
    page.click(f"{BOX} .md-button--primary")
    assert "ж" in page.inner_text(".lit-model-progress")
    assert page.inner_text(".lit-model-output") == ""
    assert tab.errors == [] and tab.foreign == []


@in_browser
def test_the_heads_the_figures_name_are_one_click_away(tab):  # noqa: F811
    """A button per head the figures name by pattern: it chooses that layer and
    head in the selects, and it is the one pressed while they show it."""
    from generate import chosen_heads

    page = opened(tab)
    chips = page.locator(".lit-model-named button")
    named = chosen_heads()
    assert chips.count() == len(named) == 3
    for i, (name, (layer, head)) in enumerate(named.items()):
        chip = chips.nth(i)
        assert chip.inner_text() == f"{name} (layer {layer}, head {head})"
        chip.click()
        selects = page.locator(".lit-model-explorer select")
        assert [selects.nth(0).input_value(), selects.nth(1).input_value()] == [
            str(layer),
            str(head),
        ]
        pressed = [chips.nth(j).get_attribute("aria-pressed") for j in range(3)]
        assert pressed == [str(j == i).lower() for j in range(3)]
        assert f"layer {layer}, head {head} reads" in page.inner_text(
            ".lit-model-readout"
        )
