"""Each benchmark's page in headless Chromium: open, scrub, play, click an item, check what is shown."""

from __future__ import annotations

import json
from pathlib import Path

from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from viewer_browser import open_page, serving, wait_for

from memgym.viewer.export import export
from memgym.viewer.sites import open_site

IMAGE_LOADED = "const i = document.getElementById('{id}'); return i.complete && i.naturalWidth > 0 && i.src;"
IMAGE_SHOWS = (
    "const i = document.getElementById('{id}'); return i.complete && i.naturalWidth > 0 && i.src.endsWith('{end}');"
)


def canvas_pixel(driver, canvas_id: str, x: float, y: float) -> list[int]:
    script = f"return Array.from(document.getElementById('{canvas_id}').getContext('2d').getImageData({int(x)}, {int(y)}, 1, 1).data);"
    return driver.execute_script(script)


def screenshot(driver, path: Path) -> None:
    driver.save_screenshot(str(path))
    assert path.stat().st_size > 10_000


def test_dialogmem_run_page(browser, dialogmem_run, tmp_path):
    site = open_site(dialogmem_run)
    episode = site.episode(0)
    last = len(episode["frames"]) - 1
    with serving(site) as url:
        open_page(browser, url)
        assert wait_for(browser, IMAGE_LOADED.format(id="map-image"))
        assert wait_for(browser, IMAGE_SHOWS.format(id="frame-rgb", end="/media/0/rgb_0.jpg"))
        # scrub to the end with the keyboard: the frame, its label and the dialogue follow
        browser.find_element(By.ID, "frame-slider").send_keys(Keys.END)
        assert wait_for(browser, IMAGE_SHOWS.format(id="frame-depth", end=f"/media/0/depth_{last}.png"))
        assert browser.find_element(By.ID, "frame-label").text.startswith(f"frame {last} / {last}")
        assert not browser.find_elements(By.CSS_SELECTOR, ".turn.future")
        # a turn jumps to the frame it was said at
        turn = episode["dialogue"][1]
        browser.find_element(By.CSS_SELECTOR, f".turn[data-turn='{turn['turn_id']}']").click()
        assert browser.find_element(By.ID, "frame-slider").get_attribute("value") == str(turn["step"])
        assert "current" in browser.find_element(
            By.CSS_SELECTOR, f".turn[data-turn='{turn['turn_id']}']"
        ).get_attribute("class")
        # play advances the frames
        browser.find_element(By.ID, "frame-slider").send_keys(Keys.HOME)
        browser.find_element(By.ID, "play").click()
        wait_for(browser, "return Number(document.getElementById('frame-slider').value) >= 3")
        browser.find_element(By.ID, "play").click()
        # a navigation item: gold answer, each memory's answer, the true and predicted locations on the map
        item = next(i for i in episode["items"] if i["task"] == "navigation")
        browser.find_element(By.CSS_SELECTOR, f"tr.item[data-item='{item['item_id']}']").click()
        assert browser.find_element(By.ID, "gold-answer").text == item["answer"]
        oracle = browser.find_element(By.CSS_SELECTOR, "#item-results tr[data-memory='oracle'] .prediction")
        assert oracle.text == f"OBJECT {item['answer']}"
        assert browser.find_element(By.CSS_SELECTOR, "#item-results tr[data-memory='dialogue']")
        x = (item["target"][0] - episode["map"]["origin"][0]) * episode["map"]["ppm"]
        y = (item["target"][2] - episode["map"]["origin"][1]) * episode["map"]["ppm"]
        ring = canvas_pixel(browser, "map-canvas", x + 10, y)  # the green ring around the true location
        assert ring[1] > ring[0] and ring[1] > ring[2] and ring[3] == 255, ring
        cross = canvas_pixel(browser, "map-canvas", x, y)  # the oracle's predicted location, in its colour
        swatch = browser.find_element(By.CSS_SELECTOR, "#item-results tr[data-memory='oracle'] .swatch")
        colour = [int(v) for v in swatch.value_of_css_property("background-color")[5:-1].split(",")[:3]]
        assert max(abs(a - b) for a, b in zip(cross[:3], colour)) < 40, (cross, colour)
        # the map's labels (true answer, each memory's cross: here all at one spot) do not overlap
        boxes = json.loads(browser.find_element(By.ID, "map-canvas").get_attribute("data-label-boxes"))
        assert len(boxes) >= 2
        for i, (x0, y0, w0, h0) in enumerate(boxes):
            for x1, y1, w1, h1 in boxes[i + 1 :]:
                assert x0 + w0 <= x1 or x1 + w1 <= x0 or y0 + h0 <= y1 or y1 + h1 <= y0, boxes
        # memory contents: a snapshot's frame chip jumps to its frame
        browser.find_element(By.CSS_SELECTOR, ".memory-tab[data-memory='3dmem+controlled']").click()
        snapshot = site.episode(0)["contents"]["3dmem+controlled"]["snapshots"][0]
        chip = browser.find_element(By.CSS_SELECTOR, f"tr.snapshot[data-snapshot='{snapshot['id']}'] .frame-chip")
        browser.execute_script("arguments[0].scrollIntoView()", chip)
        chip.click()
        assert browser.find_element(By.ID, "frame-slider").get_attribute("value") == str(snapshot["frame"])
        screenshot(browser, tmp_path / "dialogmem.png")


def test_exported_page_opens_from_disk(browser, dialogmem_dataset, tmp_path):
    index = export(open_site(dialogmem_dataset), tmp_path / "page", progress=False)
    open_page(browser, index.as_uri())
    assert wait_for(browser, IMAGE_SHOWS.format(id="frame-semantic", end="/media/0/semantic_0.png"))
    item = browser.find_element(By.CSS_SELECTOR, "tr.item")
    item.click()
    assert "No results" in browser.find_element(By.ID, "item-detail").text  # a dataset has no answers
    screenshot(browser, tmp_path / "dialogmem_dataset.png")


def test_voxmem_run_page(browser, voxmem_run, tmp_path):
    site = open_site(voxmem_run)
    episode = site.episode(1)
    with serving(site) as url:
        open_page(browser, url + "#episode=1")
        assert browser.find_element(By.ID, "question-text").text == episode["question"]
        assert browser.find_element(By.ID, "gold-answer").text == episode["answer"]
        blocks = browser.find_elements(By.CSS_SELECTOR, "#timeline .session")
        assert [b.get_attribute("data-role") for b in blocks] == [s["role"] for s in episode["sessions"]]
        # click a session with spoken turns: its transcripts and players are shown
        k = next(k for k, s in enumerate(episode["sessions"]) if any("audio" in t for t in s["turns"]))
        blocks[k].click()
        assert "selected" in blocks[k].get_attribute("class")
        transcripts = [t.text for t in browser.find_elements(By.CSS_SELECTOR, "#session-detail .transcript")]
        assert transcripts == [t["text"] for t in episode["sessions"][k]["turns"]]
        assert browser.find_element(By.ID, "session-role").text == episode["sessions"][k]["role"]
        # play the first user turn: the audio element's clock advances
        played = browser.execute_async_script(
            "const done = arguments[0]; const audio = document.querySelector('#session-detail audio');"
            "audio.play().then(() => setTimeout(() => done(audio.currentTime), 600), (e) => done(String(e)));"
        )
        assert isinstance(played, float) and played > 0.1, played
        replies = browser.find_elements(By.CSS_SELECTOR, "#replies tbody tr")
        assert {(r.get_attribute("data-model"), r.get_attribute("data-memory")) for r in replies} == {
            (r["model"], r["memory"]) for r in episode["results"]
        }
        screenshot(browser, tmp_path / "voxmem.png")


def test_amemops_run_page(browser, amemops_run, tmp_path):
    site = open_site(amemops_run)
    episode = site.episode(0)
    with serving(site) as url:
        open_page(browser, url)
        assert wait_for(browser, IMAGE_LOADED.format(id="spectrogram"))
        assert browser.execute_script("return document.getElementById('spectrogram').naturalWidth") == episode["frames"]
        # scrub: the playhead and the audio follow the slider
        wait_for(browser, "return document.getElementById('stream-audio').readyState >= 1")
        browser.find_element(By.ID, "time-slider").send_keys(Keys.END)
        assert browser.find_element(By.ID, "time-label").text.endswith(f"(frame {episode['frames'] - 1})")
        assert browser.execute_script("return document.getElementById('stream-audio').currentTime") > 9.0
        # click a query: the audio seeks to it, the gold answer and the model's answer are shown
        query = episode["queries"][1]
        browser.find_element(By.CSS_SELECTOR, f"tr.query[data-query='{query['id']}']").click()
        assert browser.find_element(By.ID, "gold-answer").text == query["answer_label"]
        shown = browser.find_element(By.CSS_SELECTOR, "#query-results .prediction").text
        assert shown == query["results"][0]["label"]
        at = browser.execute_script("return document.getElementById('stream-audio').currentTime")
        assert abs(at - query["onset"] / episode["frame_rate"]) < 0.05
        # play: the clock advances from the query
        played = browser.execute_async_script(
            "const done = arguments[0]; const audio = document.getElementById('stream-audio');"
            "audio.play().then(() => setTimeout(() => done(audio.currentTime), 600), (e) => done(String(e)));"
        )
        assert isinstance(played, float) and played > at + 0.1, played
        screenshot(browser, tmp_path / "amemops.png")


def test_dataset_pages_say_there_are_no_answers(browser, vox_dataset, amemops_set, tmp_path):
    with serving(open_site(vox_dataset)) as url:
        open_page(browser, url)
        assert "No replies" in browser.find_element(By.ID, "view").text
        assert browser.find_elements(By.CSS_SELECTOR, "#session-detail audio")
    site = open_site(amemops_set)
    with serving(site) as url:
        open_page(browser, url + "#episode=1")
        assert wait_for(browser, IMAGE_SHOWS.format(id="spectrogram", end="/media/1/spectrogram.png"))
        query = site.episode(1)["queries"][0]
        browser.find_element(By.CSS_SELECTOR, f"tr.query[data-query='{query['id']}']").click()
        assert browser.find_element(By.ID, "gold-answer").text == query["answer_label"]
        assert "No answers" in browser.find_element(By.ID, "query-detail").text
        screenshot(browser, tmp_path / "amemops_set.png")
