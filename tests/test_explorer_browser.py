"""The explorer's page in a real headless browser: the system's Chromium, driven by Selenium.

Needs ``chromium`` and ``chromedriver`` (Debian: ``apt-get install chromium chromium-driver``,
as ``.ci/run`` does) and the ``selenium`` package (the ``test`` extra); nothing is downloaded at
run time (Selenium Manager is told to stay offline). Without them the tests skip and say why.
"""

from __future__ import annotations

import os
import shutil

import pytest

from acp_lifecycle.sims.explore.server import Explorer

webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed (pip install -e '.[test]')")
from selenium.webdriver.common.action_chains import ActionChains  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
DRIVER = shutil.which("chromedriver")
pytestmark = pytest.mark.skipif(CHROMIUM is None or DRIVER is None,
                                reason="no chromium/chromedriver on PATH (.ci/setup as root, or apt-get install chromium chromium-driver)")


@pytest.fixture(scope="module")
def server():
    s = Explorer(0).start()
    yield s
    s.shutdown()
    s.server_close()


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    os.environ["SE_OFFLINE"] = "true"  # Selenium Manager: never download a browser or a driver
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ("--headless", "--no-sandbox", "--disable-gpu", "--window-size=1400,1100",
                f"--user-data-dir={tmp_path_factory.mktemp('chromium')}"):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})  # the console: a failed request shows there
    driver = webdriver.Chrome(options=options, service=webdriver.ChromeService(executable_path=DRIVER))
    driver.set_page_load_timeout(60)
    yield driver
    driver.quit()


def wait_depth(driver, n: int) -> None:
    WebDriverWait(driver, 30).until(
        lambda d: d.find_element(By.ID, "depth").text == str(n)
        and d.find_elements(By.CSS_SELECTOR, "#actions li"))


def shown(driver) -> dict:
    return {"state": driver.find_element(By.ID, "state").text, "depth": driver.find_element(By.ID, "depth").text,
            "actions": driver.find_element(By.ID, "actions").text, "verdicts": driver.find_element(By.ID, "verdicts").text,
            "chart steps": [e.text for e in driver.find_elements(By.CSS_SELECTOR, "#chart text.step")]}


def check_link(server, browser, bug: str, prop: str):
    """The link to ``prop``'s run among `check`'s counterexamples of ``bug`` on ``tiny``."""
    browser.get(server.url + f"?config=tiny&bug={bug}")
    wait_depth(browser, 0)
    browser.find_element(By.ID, "run-check").click()
    return WebDriverWait(browser, 60).until(
        lambda d: next((a for a in d.find_elements(By.CSS_SELECTOR, "#traces a") if a.text == prop), None))


def test_five_actions_back_two_and_a_reload_shows_the_same_state(server, browser):
    browser.get(server.url + "?config=tiny")
    wait_depth(browser, 0)
    # submit, receive, insert (retained), echo by a chunk, deliver the chunk to the client
    for n, index in enumerate((0, 0, 1, 2, 0), 1):
        browser.find_element(By.CSS_SELECTOR, f'#actions button.take[data-index="{index}"]').click()
        wait_depth(browser, n)
    after_five = browser.current_url
    assert after_five.endswith("?config=tiny&path=0,0,1,2,0")
    assert "ClientReceive(0, 'chunk')" in shown(browser)["chart steps"][-1]
    assert len(shown(browser)["chart steps"]) == 5
    for n in (4, 3):
        browser.find_element(By.ID, "back").click()
        wait_depth(browser, n)
    url = browser.current_url
    assert url.endswith("?config=tiny&path=0,0,1")
    before = shown(browser)
    assert len(before["chart steps"]) == 3
    assert browser.find_element(By.ID, "forward").is_enabled()
    browser.refresh()
    wait_depth(browser, 3)
    assert browser.current_url == url
    assert shown(browser) == before


def test_a_seeded_bugs_counterexample_opens_from_its_link(server, browser):
    link = check_link(server, browser, "answer-at-receipt", "success_only_after_insertion")
    assert "VIOLATED" in link.find_element(By.XPATH, "..").text
    link.click()
    wait_depth(browser, 2)
    assert "bug=answer-at-receipt" in browser.current_url and browser.current_url.endswith("path=0,0")
    verdicts = browser.find_element(By.ID, "verdicts").text
    assert "step 2: success_only_after_insertion" in verdicts
    steps = browser.find_elements(By.CSS_SELECTOR, "#chart text.step.bad")
    assert [s.text for s in steps] == ["2. AgentReceive(0, 'prompt')"]


def test_a_bad_path_is_reported_on_the_page(server, browser):
    browser.get(server.url + "?config=tiny&path=0,7")
    error = WebDriverWait(browser, 30).until(lambda d: d.find_element(By.ID, "error").text)
    assert error == "path: step 2 takes action 7, but 1 action(s) are enabled there (0..0)"


def test_a_double_click_takes_one_step(server, browser):
    browser.get(server.url + "?config=tiny")
    wait_depth(browser, 0)
    ActionChains(browser).double_click(browser.find_element(By.CSS_SELECTOR, '#actions button.take[data-index="0"]')).perform()
    wait_depth(browser, 1)
    # each click puts its path in the URL at once: a second step would be there already (path=0,0)
    assert browser.current_url.endswith("?config=tiny&path=0") and browser.find_element(By.ID, "depth").text == "1"


def test_a_liveness_counterexample_shows_what_it_broke(server, browser):
    """never-echo's counterexample ends where no step is left and the message was never echoed:
    the page said "broken by this run: none", in green."""
    check_link(server, browser, "never-echo", "every_inserted_message_echoed").click()
    WebDriverWait(browser, 30).until(lambda d: "no action is enabled" in d.find_element(By.ID, "actions").text.lower())
    broken = browser.find_element(By.CSS_SELECTOR, "#verdicts ul.v li")
    assert "every_inserted_message_echoed" in broken.text and "never reported" in broken.text
    assert "no step is left" in broken.text and "bad" in broken.get_attribute("class").split()


@pytest.mark.parametrize("query, error", [
    ("path=0,7", "path: step 2 takes action 7, but 1 action(s) are enabled there (0..0)"),
    ("path=0,%C2%B2", "path: '²' is not an action index (a path is action indices: 0,3,1)"),
    ("set=foo%3D1&path=0,0", "set=foo=1: unknown bound 'foo' (give NAME=VALUE)"),
])
def test_a_url_that_names_no_state_says_why_and_back_leads_out(server, browser, query, error):
    """After a bad path the panels were blank and back was disabled; ``set=foo=1`` showed Python's TypeError."""
    browser.get(server.url + "?config=tiny&" + query)
    shown_error = WebDriverWait(browser, 30).until(lambda d: d.find_element(By.ID, "error").text)
    assert shown_error.startswith(error)
    assert "names no state" in browser.find_element(By.ID, "actions").text
    assert browser.find_element(By.ID, "state").text == "(no state)"
    back = browser.find_element(By.ID, "back")
    assert back.is_enabled()
    if "set=" in query:
        browser.find_element(By.ID, "restart").click()  # (the bound is still wrong: the same line)
        WebDriverWait(browser, 30).until(lambda d: "path=&" not in d.current_url and d.current_url.endswith("path="))
        assert browser.find_element(By.ID, "error").text.startswith(error)
        return
    back.click()
    wait_depth(browser, 1)
    assert not browser.find_element(By.ID, "error").is_displayed()
    assert browser.current_url.endswith("?config=tiny&path=0")


def test_a_page_load_requests_nothing_that_fails(server, browser, monkeypatch):
    """Every page load logged a 404 (the browser's request for /favicon.ico)."""
    from acp_lifecycle.sims.explore import server as explore_server

    answered = []
    monkeypatch.setattr(explore_server._Handler, "log_request",
                        lambda self, code="-", size="-": answered.append((self.path, int(code))))
    browser.get_log("browser")  # (what earlier tests left)
    browser.get(server.url + "?config=tiny")
    wait_depth(browser, 0)
    browser.refresh()
    wait_depth(browser, 0)
    assert [e["message"] for e in browser.get_log("browser") if e["level"] == "SEVERE"] == []
    assert answered and [(path, code) for path, code in answered if code >= 400] == []
