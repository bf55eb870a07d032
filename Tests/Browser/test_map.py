"""`akloc map` in real headless Chromium (issue 14, docs/map.md): the live page
against the real aklocd reading a real gpsd replay, the snapshot from file://,
and bad requests to the page server. Screenshots go to $AKLOC_ARTIFACTS
(default .build/test-artifacts/map). Run by `make test-map`.

No network: Chromium gets a dead proxy and a resolver that knows no names, so
anything the page tried to fetch from outside would fail (and log an error)."""

import json
import math
import os
import re
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import urllib.error
import urllib.request
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "clients", "python", "tests"))
from live import REPOSITORY, Replay, _kill_group, require_tools  # noqa: E402

BOAT = "humminbird-M37"  # a powerboat on the Connecticut River, 44.435 N 71.676 W
ARTIFACTS = os.environ.get("AKLOC_ARTIFACTS", os.path.join(REPOSITORY, ".build", "test-artifacts", "map"))
REQUIRED = os.environ.get("AKLOC_REQUIRE_TOOLS") == "1"

try:
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait
except ImportError:  # checked in setUpClass, where it can fail or skip
    webdriver = None


def png(width: int, height: int, rgb=(0x20, 0xA0, 0x40)) -> bytes:
    """A solid PNG, written by hand so the test needs no imaging library."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    rows = b"".join(b"\x00" + bytes(rgb) * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


def daemon_call(socket_path: str, op: str, **arguments):
    """One request on a fresh connection; returns (ok, result or error)."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
        connection.settimeout(10)
        connection.connect(socket_path)
        stream = connection.makefile("rwb")
        json.loads(stream.readline())  # hello
        stream.write(json.dumps(dict(arguments, id=1, op=op)).encode() + b"\n")
        stream.flush()
        while True:
            message = json.loads(stream.readline())
            if message.get("id") == 1:
                return message["ok"], message.get("result", message.get("error"))


class MapPageTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.cleanups = []
        try:
            cls._start()
        except BaseException:
            cls.tearDownClass()
            raise

    @classmethod
    def _start(cls) -> None:
        probe = unittest.TestCase()
        missing = [name for name in ("chromium", "chromedriver") if shutil.which(name) is None]
        if webdriver is None:
            missing.append("python3-selenium")
        if not os.path.isfile("/usr/share/javascript/leaflet/leaflet.js"):
            missing.append("libjs-leaflet")
        if missing:
            message = "missing " + ", ".join(missing) + " (make deps)"
            if REQUIRED:
                raise AssertionError(message)
            raise unittest.SkipTest(message)
        aklocd = require_tools(probe)
        cls.akloc = os.path.join(os.path.dirname(aklocd), "akloc")
        os.makedirs(ARTIFACTS, exist_ok=True)
        cls.directory = tempfile.mkdtemp(prefix="akloc-map-")
        cls.cleanups.append(lambda: shutil.rmtree(cls.directory, ignore_errors=True))
        cls.marker_png = os.path.join(cls.directory, "boat.png")
        with open(cls.marker_png, "wb") as file:
            file.write(png(40, 40))
        cls.dock_svg = os.path.join(cls.directory, "dock.svg")
        with open(cls.dock_svg, "w") as file:
            file.write('<svg xmlns="http://www.w3.org/2000/svg" width="32" height="32">'
                       '<rect width="32" height="32" rx="6" fill="#7b3fe4"/></svg>')

        # 0.4 s per sentence: about 45 s of a boat moving, enough for every test here.
        # aklocd names the fixes from the repository's geo data (reverseGeocode).
        cls.replay = Replay(aklocd, BOAT, 0.4, config="[geo]\ndata-dir = %s\n" % os.path.join(REPOSITORY, "data"))
        cls.cleanups.append(cls.replay.stop)
        cls.ops = {}
        for op in ("track", "places", "savePlace", "reverseGeocode"):
            ok, result = daemon_call(cls.replay.socket, op, **({"name": "Dock", "coordinate": {
                "latitude": 44.4362, "longitude": -71.6740}, "note": "fuel and ice"} if op == "savePlace" else {}))
            cls.ops[op] = ok or result.get("code") != "unknownOp"

        cls.server_log = open(os.path.join(cls.directory, "map.log"), "w+b")
        cls.server = subprocess.Popen(
            [cls.akloc, "--socket", cls.replay.socket, "map", "--listen", "127.0.0.1:0",
             "--data-dir", os.path.join(REPOSITORY, "data"), "--request-timeout", "2", "--since", "0",
             "--marker-image", cls.marker_png, "--place-image", "Dock=" + cls.dock_svg],
            stdout=subprocess.PIPE, stderr=cls.server_log, start_new_session=True)
        cls.cleanups.append(cls.server_log.close)
        cls.cleanups.append(lambda: cls.server.stdout.close())
        cls.cleanups.append(lambda: _kill_group(cls.server))
        line = cls.server.stdout.readline().decode().strip()
        if not line.startswith("http://"):
            cls.server_log.seek(0)
            raise AssertionError("akloc map printed %r: %s" % (line, cls.server_log.read().decode()))
        cls.url = line
        cls.port = int(re.search(r":(\d+)/$", line).group(1))
        cls.driver = cls._browser()

    @classmethod
    def _browser(cls):
        options = Options()
        options.binary_location = shutil.which("chromium")
        for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                         "--window-size=1000,700", "--proxy-server=http://127.0.0.1:9",
                         "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1",
                         "--no-first-run", "--disable-extensions", "--disable-background-networking",
                         "--user-data-dir=" + os.path.join(cls.directory, "chromium")):
            options.add_argument(argument)
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        service = Service(shutil.which("chromedriver"), log_output=os.path.join(cls.directory, "chromedriver.log"))
        driver = webdriver.Chrome(options=options, service=service)
        # chromedriver and Chromium are killed by pid: quit() first, then the service's process.
        cls.cleanups.append(service.stop)
        cls.cleanups.append(driver.quit)
        return driver

    @classmethod
    def tearDownClass(cls) -> None:
        for cleanup in reversed(cls.cleanups):
            try:
                cleanup()
            except Exception:
                pass
        cls.cleanups = []

    # MARK: helpers

    def wait(self, script: str, timeout: float = 20, message: str = ""):
        value = WebDriverWait(self.driver, timeout, poll_frequency=0.05).until(
            lambda driver: driver.execute_script("return " + script), message or script)
        return value

    def image_width(self, image) -> int:
        """The natural width of an <img> once the browser is done with it (loaded, or failed: then 0); an
        image the page has just added may still be on its way, even from a data URI."""
        WebDriverWait(self.driver, 20, poll_frequency=0.05).until(
            lambda driver: driver.execute_script("return arguments[0].complete", image), "the image loaded")
        return self.driver.execute_script("return arguments[0].naturalWidth", image)

    def severe_console_entries(self):
        return [entry for entry in self.driver.get_log("browser") if entry["level"] == "SEVERE"]

    def open_page(self, url: str) -> None:
        self.driver.get(url)
        self.wait("window.akloc && window.akloc.loaded === true", message="the page's layers loaded")

    def screenshot(self, name: str) -> None:
        self.driver.save_screenshot(os.path.join(ARTIFACTS, name))

    def get(self, path: str, method: str = "GET"):
        request = urllib.request.Request(self.url.rstrip("/") + path, method=method)
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                return response.status, response.read()
        except urllib.error.HTTPError as error:
            return error.code, error.read()

    def raw(self, data: bytes, timeout: float = 10) -> bytes:
        """Sends `data` on a new connection; everything the server sends before closing."""
        with socket.create_connection(("127.0.0.1", self.port), timeout=timeout) as connection:
            try:
                connection.sendall(data)
            except OSError:
                pass
            received = b""
            try:
                while True:
                    chunk = connection.recv(65536)
                    if not chunk:
                        break
                    received += chunk
            except (ConnectionResetError, socket.timeout):
                pass
            return received

    def track_point_count(self) -> int:
        """What `akloc track` gives (its NDJSON lines), or the op's pages when the CLI has no track command."""
        # All of it (since epoch 0): gpsd dates the replay's fixes by its own guess, not today.
        cli = subprocess.run([self.akloc, "--socket", self.replay.socket, "track", "--since", "0", "--format", "ndjson"],
                             capture_output=True, timeout=30)
        if cli.returncode == 0:
            return len([line for line in cli.stdout.splitlines() if line.strip()])
        total, arguments = 0, {"since": 0}
        while True:
            ok, result = daemon_call(self.replay.socket, "track", **arguments)
            self.assertTrue(ok, result)
            total += len(result["points"])
            if not result.get("next") or not result["points"]:
                return total
            arguments = {"since": 0, "after": result["next"]}

    def snapshot_with(self, name: str, change) -> str:
        """A snapshot of the replay (`akloc map --output`) whose inlined data `change` edits in place: data the
        CLI would not write, to see that the page draws what it can of it. Returns its file:// URL."""
        output = os.path.join(self.directory, name)
        subprocess.run([self.akloc, "--socket", self.replay.socket, "map", "--output", output,
                        "--data-dir", os.path.join(REPOSITORY, "data")], check=True, capture_output=True, timeout=60)
        with open(output, encoding="utf-8") as file:
            html = file.read()
        found = re.search(r'<script id="akloc-config" type="application/json">(.*?)</script>', html, re.S)
        config = json.loads(found.group(1))
        change(config["snapshot"])
        inline = json.dumps(config).replace("<", "\\u003c")
        with open(output, "w", encoding="utf-8") as file:
            file.write(html[:found.start(1)] + inline + html[found.end(1):])
        return "file://" + output

    def view(self):
        """The map's zoom and centre."""
        return self.driver.execute_script(
            "const m = window.akloc.map, c = m.getCenter(); return [m.getZoom(), c.lat, c.lng]")

    # MARK: the live page

    def test_1_live_page_draws_layers_and_follows_the_replay(self) -> None:
        self.open_page(self.url)
        first = self.wait("window.akloc.location", message="a first position over /events")
        self.assertEqual(self.severe_console_entries(), [])
        # Country outlines over the sea, and the boat among them.
        countries = self.driver.find_elements(By.CSS_SELECTOR, "path.akloc-country")
        self.assertGreater(len(countries), 200)
        sea = self.driver.execute_script("return getComputedStyle(document.getElementById('map')).backgroundColor")
        self.assertEqual(sea, "rgb(185, 211, 230)")
        # The position marker is the custom PNG, loaded; its accuracy circle is drawn.
        image = self.driver.find_element(By.CSS_SELECTOR, ".akloc-position img")
        self.assertTrue(image.get_attribute("src").endswith("/images/marker"))
        self.assertEqual(self.image_width(image), 40)
        self.assertEqual(len(self.driver.find_elements(By.CSS_SELECTOR, "path.akloc-accuracy")), 1)
        self.assertAlmostEqual(first["latitude"], 44.435, delta=0.01)
        self.assertAlmostEqual(first["longitude"], -71.676, delta=0.01)

        # The marker moves as the replay advances: a later fix, further east, at a new place on screen.
        moved = self.wait(
            "window.akloc.location.timestamp > %s && window.akloc.location" % json.dumps(first["timestamp"])
            if isinstance(first.get("timestamp"), (int, float)) else
            "window.akloc.location.longitude !== %r && window.akloc.location" % first["longitude"],
            timeout=30, message="a later fix on the page")
        self.assertNotEqual(moved["longitude"], first["longitude"])
        ok, current = daemon_call(self.replay.socket, "get", keyPath="myLocation")
        self.assertTrue(ok)
        self.assertLess(abs(current["longitude"] - moved["longitude"]), 0.01)
        # The view follows the position, so the marker stays put on screen while the map moves under it.
        marker_point = self.driver.execute_script(
            "const m = document.querySelector('.akloc-position').getBoundingClientRect();"
            "return [m.left + m.width / 2, m.top + m.height / 2];")
        self.assertAlmostEqual(marker_point[0], 500, delta=3)

        if self.ops["track"]:
            expected = self.track_point_count()
            self.driver.refresh()
            self.wait("window.akloc && window.akloc.loaded === true")
            drawn = self.wait("window.akloc.trackPoints")
            path = self.driver.find_element(By.CSS_SELECTOR, "path.akloc-track").get_attribute("d")
            self.assertEqual(len(re.findall(r"[ML]", path)), drawn)
            self.assertGreater(expected, 0)
            self.assertGreaterEqual(drawn, expected)  # the recorder only adds points meanwhile
        if self.ops["places"]:
            place = self.driver.find_element(By.CSS_SELECTOR, ".akloc-place img")
            self.assertTrue(place.get_attribute("src").endswith("/images/place/0"))
            self.assertEqual(self.image_width(place), 32)
        self.screenshot("live.png")
        self.driver.execute_script("window.akloc.following = false; window.akloc.map.setZoom(6, {animate: false})")
        self.screenshot("overview.png")
        self.assertEqual(self.severe_console_entries(), [])

    def test_2_callout_as_mapviewplus_draws_it(self) -> None:
        self.open_page(self.url)
        self.wait("window.akloc.location")
        self.driver.find_element(By.CSS_SELECTOR, ".akloc-position").click()
        callout = self.wait("document.querySelector('.akloc-callout')", message="the callout opened")
        size = self.driver.execute_script(
            "const r = arguments[0].getBoundingClientRect(); return [r.width, r.height]", callout)
        self.assertAlmostEqual(size[0], 300, delta=0.05)  # layout may land on a sub-pixel
        self.assertAlmostEqual(size[1], 60, delta=0.05)
        image = self.driver.find_element(By.CSS_SELECTOR, ".akloc-callout-image")
        self.assertEqual([image.size["width"], image.size["height"]], [44, 44])
        # Read together: a fix arriving in between would change both.
        subtitle, title, location, placemark = self.driver.execute_script(
            "return [document.querySelector('.akloc-callout-subtitle').textContent,"
            " document.querySelector('.akloc-callout-title').textContent, window.akloc.location, window.akloc.placemark]")
        self.assertIn("%.1f km/h" % (location["speed"] * 3.6), subtitle)
        # JavaScript's Math.round takes halves up (76.5 → 77); Python's round takes them to even.
        self.assertIn("%d°" % math.floor(location["course"] + 0.5), subtitle)
        if "horizontalAccuracy" in location:
            self.assertIn("±%d m" % round(location["horizontalAccuracy"]), subtitle)
        else:
            self.assertIn("accuracy unknown", subtitle)
        if self.ops["reverseGeocode"]:
            self.assertEqual(title, placemark.get("formattedAddress") or placemark.get("name"))
        else:
            self.assertEqual(title, "My location")
        # The anchor: an equilateral triangle of height 16 pointing down at the marker.
        anchor = self.driver.find_element(By.CSS_SELECTOR, "svg.akloc-anchor")
        self.assertAlmostEqual(float(anchor.get_attribute("height")), 16, places=3)
        self.assertAlmostEqual(float(anchor.get_attribute("width")), 16 / 3 ** 0.5 * 2, places=3)
        points = [tuple(map(float, p.split(","))) for p in
                  anchor.find_element(By.TAG_NAME, "polygon").get_attribute("points").split()]
        sides = [((a[0] - b[0]) ** 2 + (a[1] - b[1]) ** 2) ** 0.5 for a, b in zip(points, points[1:] + points[:1])]
        self.assertAlmostEqual(max(sides) - min(sides), 0, places=3)
        # One shadow of opacity 0.3 over callout and anchor together.
        shadow = self.driver.execute_script(
            "return getComputedStyle(document.querySelector('.akloc-callout-and-anchor')).filter")
        self.assertIn("rgba(0, 0, 0, 0.3)", shadow)
        # The show animation: a 0.8 s spring.
        self.assertEqual(self.driver.execute_script("return window.akloc.callout.shown.effect.getTiming().duration"), 800)
        # Fully in view, 8 px from each edge at least, once the spring has settled.
        self.wait("window.akloc.callout.shown.playState === 'finished'", timeout=10)
        self.assertTrue(self.driver.find_element(By.CSS_SELECTOR, ".akloc-callout-detail").is_displayed())
        inside = self.driver.execute_script(
            "const m = document.getElementById('map').getBoundingClientRect();"
            "const c = document.querySelector('.akloc-callout-and-anchor').getBoundingClientRect();"
            "return c.left >= m.left + 7.5 && c.top >= m.top + 7.5 && c.right <= m.right - 7.5 && c.bottom <= m.bottom - 7.5")
        self.assertTrue(inside)
        self.screenshot("callout.png")
        self.driver.find_element(By.CSS_SELECTOR, ".akloc-callout-detail").click()
        self.assertIn("speed:", self.driver.find_element(By.ID, "akloc-detail").text)
        # A click on the map hides it (0.15 s), and it is gone.
        hide_started = time.monotonic()
        self.driver.execute_script("window.akloc.map.fire('click')")
        self.wait("document.querySelector('.akloc-callout') === null", timeout=5)
        self.assertLess(time.monotonic() - hide_started, 3)
        if self.ops["places"]:
            # The user pans to the place first: the view follows the boat, and the dock is off-screen.
            self.driver.execute_script(
                "window.akloc.following = false;"
                "window.akloc.map.setView([44.4362, -71.6740], window.akloc.map.getZoom(), {animate: false})")
            self.driver.find_element(By.CSS_SELECTOR, ".akloc-place").click()
            self.wait("document.querySelector('.akloc-callout-title')")
            # The text as written, not as rendered: the show animation starts at opacity 0, and WebDriver's
            # .text of an element not yet visible is "".
            title, subtitle = self.driver.execute_script(
                "return ['.akloc-callout-title', '.akloc-callout-subtitle']"
                ".map(s => document.querySelector(s).textContent)")
            self.assertEqual(title, "Dock")
            self.assertRegex(subtitle, r"^fuel and ice · [\d.]+ k?m away$")
        self.assertEqual(self.severe_console_entries(), [])

    def test_3_dark_theme(self) -> None:
        self.driver.execute_cdp_cmd("Emulation.setEmulatedMedia",
                                    {"features": [{"name": "prefers-color-scheme", "value": "dark"}]})
        try:
            self.open_page(self.url)
            self.wait("window.akloc.location")
            sea = self.driver.execute_script("return getComputedStyle(document.getElementById('map')).backgroundColor")
            self.assertEqual(sea, "rgb(13, 27, 42)")
            self.driver.find_element(By.CSS_SELECTOR, ".akloc-position").click()
            self.wait("document.querySelector('.akloc-callout')")
            background = self.driver.execute_script(
                "return getComputedStyle(document.querySelector('.akloc-callout')).backgroundColor")
            self.assertEqual(background, "rgb(44, 44, 46)")
            self.wait("window.akloc.callout.shown.playState === 'finished'", timeout=10)  # then the picture
            self.screenshot("dark.png")
            self.assertEqual(self.severe_console_entries(), [])
        finally:
            self.driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": []})

    def test_4_snapshot_from_file_url(self) -> None:
        output = os.path.join(self.directory, "snapshot.html")
        subprocess.run([self.akloc, "--socket", self.replay.socket, "map", "--output", output,
                        "--data-dir", os.path.join(REPOSITORY, "data"), "--theme", "dark",
                        "--marker-image", self.marker_png, "--place-image", "Dock=" + self.dock_svg],
                       check=True, capture_output=True, timeout=60)
        with open(output, encoding="utf-8") as file:
            html = file.read()
        self.assertNotIn('src="/', html)  # nothing left to fetch
        self.assertNotIn('href="/', html)
        self.open_page("file://" + output)
        location = self.wait("window.akloc.location", message="the snapshot's position")
        ok, current = daemon_call(self.replay.socket, "get", keyPath="myLocation")
        self.assertLess(abs(current["latitude"] - location["latitude"]), 0.01)
        self.assertGreater(len(self.driver.find_elements(By.CSS_SELECTOR, "path.akloc-country")), 200)
        image = self.driver.find_element(By.CSS_SELECTOR, ".akloc-position img")
        self.assertTrue(image.get_attribute("src").startswith("data:image/png;base64,"))
        self.assertEqual(self.image_width(image), 40)
        sea = self.driver.execute_script("return getComputedStyle(document.getElementById('map')).backgroundColor")
        self.assertEqual(sea, "rgb(13, 27, 42)")
        if self.ops["track"]:
            self.assertGreater(self.driver.execute_script("return window.akloc.trackPoints"), 0)
        if self.ops["places"]:
            self.assertEqual(len(self.driver.find_elements(By.CSS_SELECTOR, ".akloc-place")), 1)
        self.driver.find_element(By.CSS_SELECTOR, ".akloc-position").click()
        self.wait("document.querySelector('.akloc-callout')")
        self.assertEqual(self.severe_console_entries(), [])
        self.screenshot("snapshot.png")

        # A custom callout: the template's fields filled in and escaped, the anchor and shadow kept.
        template = os.path.join(self.directory, "callout.html")
        with open(template, "w") as file:
            file.write('<div class="mine"><b>{{title}}</b> <i>{{speed}}</i> [{{nosuch}}] {{latitude}}</div>')
        subprocess.run([self.akloc, "--socket", self.replay.socket, "map", "--output", output,
                        "--data-dir", os.path.join(REPOSITORY, "data"), "--callout-template", template],
                       check=True, capture_output=True, timeout=60)
        self.open_page("file://" + output)
        self.wait("window.akloc.location")
        self.driver.find_element(By.CSS_SELECTOR, ".akloc-position").click()
        mine = self.wait("document.querySelector('.akloc-callout-custom .mine')")
        location, placemark = self.driver.execute_script("return [window.akloc.location, window.akloc.placemark]")
        title = (placemark or {}).get("formattedAddress") or "My location"
        # textContent, not .text: the callout fades in from opacity 0 (see test_2).
        self.assertEqual(self.driver.execute_script("return arguments[0].textContent", mine),
                         "%s %.1f km/h [] %.5f" % (title, location["speed"] * 3.6, location["latitude"]))
        self.assertIsNone(self.driver.execute_script("return document.querySelector('.akloc-callout')"))
        self.assertEqual(len(self.driver.find_elements(By.CSS_SELECTOR, ".akloc-callout-and-anchor svg.akloc-anchor")), 1)
        self.assertEqual(self.severe_console_entries(), [])

    def test_5_bad_requests_leave_the_page_working(self) -> None:
        self.assertEqual(self.get("/nope")[0], 404)
        self.assertEqual(self.get("/../../etc/passwd")[0], 404)
        self.assertEqual(self.get("/", method="POST")[0], 405)
        self.assertTrue(self.raw(b"GET / HTTP/1.1\r\nHost: a.example\r\n\r\n").startswith(b"HTTP/1.1 403"))
        huge = b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " + b"a" * (1 << 20) + b"\r\n\r\n"
        answer = self.raw(huge)
        self.assertTrue(answer == b"" or answer.startswith(b"HTTP/1.1 431"), answer[:80])
        self.assertTrue(self.raw(b"GET / HTTP/1.1\r\n" + b"X: y\r\n" * 100 + b"\r\n").startswith(b"HTTP/1.1 431"))
        self.assertTrue(self.raw(b"BREW /pot HTTP/1.1\r\n\r\n").startswith(b"HTTP/1.1 405"))
        self.assertTrue(self.raw(b"\x16\x03\x01garbage\r\n\r\n").startswith(b"HTTP/1.1 400"))

        # Slowloris: a head trickling in is cut off at --request-timeout (2 s), and meanwhile others are served.
        slow = socket.create_connection(("127.0.0.1", self.port), timeout=10)
        slow.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        started = time.monotonic()
        self.assertEqual(self.get("/")[0], 200)
        answer = b""
        try:
            while True:
                slow.sendall(b"X-A: b\r\n")
                chunk = slow.recv(65536)  # returns when the server answers or closes
                if not chunk:
                    break
                answer += chunk
        except OSError:
            pass
        finally:
            slow.close()
        self.assertTrue(answer.startswith(b"HTTP/1.1 408"), answer[:80])
        self.assertLess(time.monotonic() - started, 8)

        # 200 streams at once: each gets its head and the current position; the page still loads; closing
        # them frees them on the server.
        baseline = json.loads(self.get("/health.json")[1])["streams"]
        streams = []
        try:
            for _ in range(200):
                connection = socket.create_connection(("127.0.0.1", self.port), timeout=10)
                connection.sendall(b"GET /events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
                streams.append(connection)
            for connection in streams:
                head = b""
                while b"event: location" not in head:
                    chunk = connection.recv(65536)
                    self.assertTrue(chunk, "a stream closed early")
                    head += chunk
                self.assertTrue(head.startswith(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream"))
            self.assertEqual(json.loads(self.get("/health.json")[1])["streams"], baseline + 200)
            self.open_page(self.url)
            self.wait("window.akloc.location")
        finally:
            for connection in streams:
                connection.close()
        deadline = time.monotonic() + 10
        while json.loads(self.get("/health.json")[1])["streams"] > baseline + 1 and time.monotonic() < deadline:
            time.sleep(0.05)
        self.assertLessEqual(json.loads(self.get("/health.json")[1])["streams"], baseline + 1)  # the page's own
        self.assertEqual(self.severe_console_entries(), [])

    def test_6_a_closed_tab_frees_its_stream_and_aklocd_restarts_are_survived(self) -> None:
        self.open_page(self.url)
        self.wait("window.akloc.connected === true")
        streams = json.loads(self.get("/health.json")[1])["streams"]
        self.driver.get("about:blank")
        deadline = time.monotonic() + 10
        while json.loads(self.get("/health.json")[1])["streams"] >= streams and time.monotonic() < deadline:
            time.sleep(0.05)
        self.assertEqual(json.loads(self.get("/health.json")[1])["streams"], streams - 1)

        self.open_page(self.url)
        self.wait("window.akloc.connected === true")
        _kill_group(self.replay.daemon)
        self.wait("window.akloc.connected === false", timeout=10)
        banner = self.driver.find_element(By.ID, "akloc-status")
        self.assertTrue(banner.is_displayed())
        self.assertIn("reconnecting", banner.text)
        self.screenshot("reconnecting.png")
        self.replay.daemon = self.replay._start_daemon()
        self.wait("window.akloc.connected === true", timeout=15)
        self.assertFalse(banner.is_displayed())

    def test_7_a_one_point_track_and_missing_coordinates_cannot_break_the_page(self) -> None:
        # Early in a drive the recorder has kept one point (one per 5 m): the page fits the view to it, at the
        # map's own maximum zoom, and the position and its accuracy circle are drawn over it.
        self.driver.get_log("browser")  # what the earlier tests' pages logged is theirs to judge
        lat, lon = 44.4352, -71.6760
        location = {"latitude": lat, "longitude": lon, "horizontalAccuracy": 12.0, "speed": 2.7, "course": 77.0,
                    "timestamp": 1158435661}

        def one_point(snapshot):
            snapshot["track"] = {"type": "FeatureCollection", "features": [{
                "type": "Feature", "geometry": {"type": "LineString", "coordinates": [[lon, lat]]},
                "properties": {"segment": 1}}]}
            snapshot["location"] = location
        self.open_page(self.snapshot_with("one-point.html", one_point))
        self.wait("window.akloc.location")
        self.assertEqual(self.severe_console_entries(), [])
        self.assertEqual(self.driver.execute_script("return window.akloc.trackPoints"), 1)
        zoom, centre_lat, centre_lon = self.view()  # Infinity would come back as None
        self.assertEqual(zoom, self.driver.execute_script("return window.akloc.map.getMaxZoom()"))
        self.assertIsInstance(zoom, (int, float))
        self.assertAlmostEqual(centre_lat, lat, places=5)
        self.assertAlmostEqual(centre_lon, lon, places=5)
        self.assertEqual(len(self.driver.find_elements(By.CSS_SELECTOR, "path.akloc-accuracy")), 1)
        self.driver.find_element(By.CSS_SELECTOR, ".akloc-position").click()
        self.wait("document.querySelector('.akloc-callout')")
        self.assertEqual(self.severe_console_entries(), [])

        # Points, places and a position without (numeric) coordinates are left out; the rest is drawn.
        def missing(snapshot):
            snapshot["track"] = {"type": "FeatureCollection", "features": [
                {"type": "Feature", "properties": {"segment": 1}, "geometry": {"type": "LineString", "coordinates": [
                    [lon, lat], [None, None], [], [lon], ["-71.6", "44.4"], None, [lon + 0.001, lat + 0.0005]]}},
                {"type": "Feature", "properties": {"segment": 2}, "geometry": None},
                {"type": "Feature", "properties": {"segment": 3}, "geometry": {"type": "LineString"}},
                {"type": "Feature", "properties": {"segment": 4}}]}
            snapshot["places"] = {"type": "FeatureCollection", "features": [
                {"type": "Feature", "properties": {"name": "Dock"},
                 "geometry": {"type": "Point", "coordinates": [lon, lat]}},
                {"type": "Feature", "properties": {"name": "Nowhere"}, "geometry": {"type": "Point", "coordinates": []}},
                {"type": "Feature", "properties": {"name": "Null"}, "geometry": None},
                {"type": "Feature", "properties": {"name": "Strings"},
                 "geometry": {"type": "Point", "coordinates": ["-71.6", "44.4"]}}]}
            snapshot["location"] = {"timestamp": 1158435661, "speed": 2.7, "latitude": None}
        self.open_page(self.snapshot_with("missing.html", missing))
        self.assertEqual(self.driver.execute_script("return window.akloc.trackPoints"), 2)
        self.assertEqual([element.get_attribute("data-place") for element in
                          self.driver.find_elements(By.CSS_SELECTOR, ".akloc-place")], ["Dock"])
        self.assertIsNone(self.driver.execute_script("return window.akloc.location"))
        self.assertEqual(self.driver.find_elements(By.CSS_SELECTOR, ".akloc-position"), [])
        zoom, centre_lat, centre_lon = self.view()
        self.assertLessEqual(zoom, self.driver.execute_script("return window.akloc.map.getMaxZoom()"))
        self.assertAlmostEqual(centre_lat, lat + 0.00025, places=3)
        self.assertAlmostEqual(centre_lon, lon + 0.0005, places=3)
        self.assertEqual(self.severe_console_entries(), [])

    # MARK: the base map

    def base_pixel(self, lat: float, lon: float):
        """The RGB the base map's canvas (lakes, admin-1 lines) drew at a position, or None where it drew nothing."""
        return self.driver.execute_script("""
            const map = window.akloc.map, canvas = document.querySelector('.leaflet-akloc-base-pane canvas');
            const point = map.latLngToContainerPoint([arguments[0], arguments[1]]);
            const box = canvas.getBoundingClientRect(), frame = map.getContainer().getBoundingClientRect();
            const x = Math.round((frame.left + point.x - box.left) * canvas.width / box.width);
            const y = Math.round((frame.top + point.y - box.top) * canvas.height / box.height);
            const [r, g, b, a] = canvas.getContext('2d').getImageData(x, y, 1, 1).data;
            return a === 0 ? null : [r, g, b];""", lat, lon)

    def river_near(self, lat: float, lon: float, radius: int = 3) -> bool:
        """Whether the base map's canvas drew the river colour within radius pixels of a position: a line of a
        pixel or so is smoothed by Leaflet and antialiased, so the pixel at a vertex may be a neighbour's."""
        pixels = self.driver.execute_script("""
            const map = window.akloc.map, canvas = document.querySelector('.leaflet-akloc-base-pane canvas');
            const point = map.latLngToContainerPoint([arguments[0], arguments[1]]), r = arguments[2];
            const box = canvas.getBoundingClientRect(), frame = map.getContainer().getBoundingClientRect();
            const x = Math.round((frame.left + point.x - box.left) * canvas.width / box.width);
            const y = Math.round((frame.top + point.y - box.top) * canvas.height / box.height);
            const data = canvas.getContext('2d').getImageData(x - r, y - r, 2 * r + 1, 2 * r + 1).data, found = [];
            for (let i = 0; i < data.length; i += 4) if (data[i + 3] >= 128) found.push([data[i], data[i + 1], data[i + 2]]);
            return found;""", lat, lon, radius)
        river = [127, 168, 204]  # --river, light theme
        return any(all(abs(a - b) <= 3 for a, b in zip(pixel, river)) for pixel in pixels)

    def set_view(self, lat: float, lon: float, zoom: int) -> None:
        self.driver.execute_script(
            "window.akloc.following = false; window.akloc.map.setView([arguments[0], arguments[1]], arguments[2],"
            " {animate: false})", lat, lon, zoom)

    def test_8_base_map_lakes_rivers_admin1_lines_and_place_labels(self) -> None:
        self.driver.get_log("browser")
        self.open_page(self.url)
        status, body = self.get("/basemap.json")
        self.assertEqual(status, 200)
        served = json.loads(body)
        with open(os.path.join(REPOSITORY, "data", "basemap.json"), encoding="utf-8") as file:
            self.assertEqual(served, json.load(file))
        drawn = self.driver.execute_script("return window.akloc.basemap")
        self.assertEqual(drawn["admin1Lines"], len(served["admin1"]))
        self.assertEqual(drawn["lakes"], len(served["lakes"]))
        self.assertEqual(drawn["places"], len(served["places"]))
        self.assertEqual(drawn["rivers"], len(served["rivers"]))
        self.assertEqual(drawn["majorRivers"], served["majorRivers"])
        self.assertGreater(drawn["majorRivers"], 100)
        self.assertGreater(drawn["rivers"], drawn["majorRivers"])

        # Lake Champlain, by Burlington (Vermont): its water is drawn in the sea's colour over the land, and
        # its island of Grand Isle is land; the towns around are labelled, the big ones first.
        self.set_view(44.6, -73.25, 9)
        sea = [185, 211, 230]
        self.assertEqual(self.base_pixel(44.53, -73.33), sea)  # the broad lake west of Burlington
        self.assertIsNone(self.base_pixel(44.72, -73.29))  # Grand Isle: a hole in the lake, land below
        self.assertIsNone(self.base_pixel(44.26, -72.58))  # Montpelier: no lake there
        labels = self.wait("window.akloc.basemap.labels.length > 0 && window.akloc.basemap.labels")
        self.assertIn("Burlington", labels)
        self.assertIn("Plattsburgh", labels)
        elements = self.driver.find_elements(By.CSS_SELECTOR, ".akloc-label")
        self.assertEqual([element.text for element in elements], labels)
        # No two labels overlap.
        boxes = [element.rect for element in elements]
        for i, a in enumerate(boxes):
            for b in boxes[i + 1:]:
                self.assertFalse(a["x"] < b["x"] + b["width"] and b["x"] < a["x"] + a["width"] and
                                 a["y"] < b["y"] + b["height"] and b["y"] < a["y"] + a["height"], (a, b))
        # The admin-1 lines from zoom 4 on (the Vermont–New Hampshire line), none at zoom 3.
        self.assertTrue(self.driver.execute_script("return window.akloc.map.hasLayer(window.akloc.admin1)"))
        self.set_view(44.6, -73.25, 3)
        self.assertFalse(self.driver.execute_script("return window.akloc.map.hasLayer(window.akloc.admin1)"))
        labels = self.driver.execute_script("return window.akloc.basemap.labels")
        self.assertNotIn("Burlington", labels)  # a town of 40 000 is not labelled on a continent
        self.assertIn("New York City", labels)

        # Rivers (GSHHG's WDB II): the Connecticut, an "additional major river", by Lancaster (New Hampshire)
        # from zoom 8 on, in the water colour beside the Vermont–New Hampshire line's dashes; the Rhine, a
        # permanent major river, at Cologne from zoom 5 on; neither on a continent.
        self.set_view(44.45, -71.7, 9)
        self.assertTrue(self.river_near(44.4386, -71.6825))
        self.assertFalse(self.river_near(44.30, -71.95))  # the hills west of the river
        self.set_view(44.45, -71.7, 7)
        self.assertFalse(self.river_near(44.4386, -71.6825))
        self.set_view(50.94, 6.96, 9)
        self.assertTrue(self.river_near(50.9461, 6.9625))
        self.set_view(50.3, 7.6, 8)  # Koblenz: the Rhine and the Moselle meet
        self.screenshot("rivers.png")
        self.set_view(50.94, 6.96, 5)
        self.assertTrue(self.river_near(50.9461, 6.9625))
        self.set_view(50.94, 6.96, 4)
        self.assertFalse(self.river_near(50.9461, 6.9625))

        # At street zoom the map is not one flat colour: Enkhuizen and its neighbours on the IJsselmeer.
        self.set_view(52.70, 5.27, 12)
        labels = self.driver.execute_script("return window.akloc.basemap.labels")
        self.assertIn("Enkhuizen", labels)
        self.assertEqual(self.base_pixel(52.72, 5.35), sea)  # the Markermeer, east of the town
        self.screenshot("street.png")
        self.set_view(52.6, 5.1, 10)
        self.screenshot("basemap.png")
        self.assertEqual(self.severe_console_entries(), [])

    # MARK: --tiles FILE.mbtiles

    def test_9_tiles_from_an_mbtiles_file(self) -> None:
        """An MBTiles file written here with Python's sqlite3 (MBTiles 1.3: metadata and tiles, rows from the
        south): akloc map serves its tiles at /tiles/Z/X/Y (rows from the north), and the page draws them."""
        import sqlite3
        path = os.path.join(self.directory, "region.mbtiles")
        colours = {}
        with sqlite3.connect(path) as database:
            database.executescript(
                "CREATE TABLE metadata (name text, value text);"
                "CREATE TABLE tiles (zoom_level integer, tile_column integer, tile_row integer, tile_data blob);"
                "CREATE UNIQUE INDEX tile_index ON tiles (zoom_level, tile_column, tile_row);")
            database.executemany("INSERT INTO metadata VALUES (?, ?)", [
                ("name", "test region"), ("format", "png"), ("minzoom", "0"), ("maxzoom", "3")])
            for z in range(4):
                for x in range(2 ** z):
                    for y in range(2 ** z):
                        rgb = (40 * z + 10, (x * 37) % 256, (y * 53) % 256)
                        colours[(z, x, y)] = rgb
                        database.execute("INSERT INTO tiles VALUES (?, ?, ?, ?)",
                                         (z, x, 2 ** z - 1 - y, png(256, 256, rgb)))
        database.close()
        log = open(os.path.join(self.directory, "tiles.log"), "w+b")
        self.addCleanup(log.close)
        server = subprocess.Popen(
            [self.akloc, "--socket", self.replay.socket, "map", "--listen", "127.0.0.1:0", "--tiles", path,
             "--data-dir", os.path.join(REPOSITORY, "data"), "--since", "0"],
            stdout=subprocess.PIPE, stderr=log, start_new_session=True)
        self.addCleanup(lambda: _kill_group(server))
        self.addCleanup(server.stdout.close)
        url = server.stdout.readline().decode().strip()
        self.assertTrue(url.startswith("http://"), url)

        # The route flips rows: XYZ row 0 at zoom 1 is the file's TMS row 1.
        with urllib.request.urlopen(url + "tiles/1/0/0", timeout=10) as response:
            self.assertEqual(response.headers["Content-Type"], "image/png")
            self.assertEqual(response.read(), png(256, 256, colours[(1, 0, 0)]))
        with urllib.request.urlopen(url + "tiles/3/5/6", timeout=10) as response:
            self.assertEqual(response.read(), png(256, 256, colours[(3, 5, 6)]))

        self.driver.get_log("browser")
        self.open_page(url)
        # The page centres itself on the first position it gets; the view is set after that one.
        self.wait("window.akloc.location", message="a first position over /events")
        self.driver.execute_script("window.akloc.following = false; window.akloc.map.setView([20, 0], 2, {animate: false})")
        # The 1000×700 window shows zoom 2's four columns and its rows 0–2 around 20° N: 12 tiles.
        self.wait("new Set([...document.querySelectorAll('img.leaflet-tile-loaded')].map((tile) => tile.src)"
                  ".filter((src) => /\\/tiles\\/2\\/\\d\\/\\d$/.test(src))).size >= 12",
                  message="the 12 tiles of zoom 2 in view drawn")
        tiles = self.driver.find_elements(By.CSS_SELECTOR, "img.leaflet-tile-loaded")
        sources = sorted({re.sub(r"^https?://[^/]+", "", tile.get_attribute("src")) for tile in tiles})
        self.assertIn("/tiles/2/0/0", sources)
        self.assertIn("/tiles/2/3/2", sources)
        self.assertTrue(all(self.image_width(tile) == 256 for tile in tiles))
        # What is on screen is the tile's colour: the pixel at (lat 60, lon -150) is in tile 2/0/0 (north-west).
        pixel = self.driver.execute_script("""
            const image = [...document.querySelectorAll('img.leaflet-tile-loaded')]
                .find((tile) => tile.src.endsWith('/tiles/2/0/0'));
            const canvas = document.createElement('canvas');
            canvas.width = canvas.height = 1;
            canvas.getContext('2d').drawImage(image, 128, 128, 1, 1, 0, 0, 1, 1);
            return [...canvas.getContext('2d').getImageData(0, 0, 1, 1).data].slice(0, 3);""")
        self.assertEqual(pixel, list(colours[(2, 0, 0)]))
        # The outlines stay, unfilled, over the tiles; the base map's own layers give way to them.
        self.assertEqual(self.driver.execute_script("return window.akloc.basemap.lakes"), 0)
        self.assertEqual(self.driver.execute_script("return window.akloc.basemap.rivers"), 0)
        # Past the file's maxzoom the deepest tiles are scaled up, not asked for.
        self.driver.execute_script("window.akloc.map.setView([20, 0], 5, {animate: false})")
        self.wait("document.querySelectorAll('img.leaflet-tile-loaded').length > 0")
        self.assertFalse(any("/tiles/5/" in tile.get_attribute("src") for tile in
                             self.driver.find_elements(By.CSS_SELECTOR, "img.leaflet-tile")))
        self.screenshot("mbtiles.png")
        self.assertEqual(self.severe_console_entries(), [])

        # Bad files: akloc map refuses them at start, naming the file and the problem.
        garbage = os.path.join(self.directory, "garbage.mbtiles")
        with open(garbage, "wb") as file:
            file.write(b"this is not a database" * 10)
        no_tiles = os.path.join(self.directory, "no-tiles.mbtiles")
        with sqlite3.connect(no_tiles) as database:
            database.execute("CREATE TABLE metadata (name text, value text)")
        database.close()
        vector = os.path.join(self.directory, "vector.mbtiles")
        shutil.copy(path, vector)
        with sqlite3.connect(vector) as database:
            database.execute("UPDATE metadata SET value = 'pbf' WHERE name = 'format'")
        database.close()
        for bad, problem in ((garbage, "not an SQLite database"), (no_tiles, "it has no tiles table"),
                             (vector, "vector tiles"), (os.path.join(self.directory, "absent.mbtiles"), "no such file")):
            result = subprocess.run([self.akloc, "--socket", self.replay.socket, "map", "--listen", "127.0.0.1:0",
                                     "--tiles", bad], capture_output=True, timeout=30)
            self.assertNotEqual(result.returncode, 0)
            self.assertIn(("--tiles %s: " % bad).encode(), result.stderr)
            self.assertIn(problem.encode(), result.stderr)

    # MARK: a day of the timeline

    def write_day(self) -> str:
        """A day recorded before: three stays on the river and the two boat trips between them, written into aklocd's track
        directory as the recorder writes a day file (AklocPosix.Journal: CRC-32C, a space, the record). The
        stays jitter by a few metres, as a still receiver does; the trips move at 5 m/s. Returns the date."""
        # Three days ago: inside the track's retention (30 days), before the replay's own points (today).
        date = time.strftime("%Y-%m-%d", time.localtime(time.time() - 3 * 86400))
        start = int(time.mktime(time.strptime(date + " 00:00", "%Y-%m-%d %H:%M"))) + 12 * 3600  # local noon
        dock, upriver, downriver = (44.4362, -71.6740), (44.4700, -71.6400), (44.4100, -71.7050)
        random = __import__("random").Random(7)
        records, t = [b"h,5eed"], start
        def fix(lat, lon, speed, course):
            nonlocal t
            records.append(("1,1,%.9f,%.9f,%.7f,%.7f,150.0,,4.0,,%.2f,,%.1f,,,3,/dev/test" %
                            (t, t, lat, lon, speed, course)).encode())
            t += 10
        def stay(at, seconds):
            for _ in range(seconds // 10):
                fix(at[0] + random.gauss(0, 0.00002), at[1] + random.gauss(0, 0.00003), 0.1, 0.0)
        def trip(a, b, course):
            metres = 111_000 * math.hypot(b[0] - a[0], (b[1] - a[1]) * math.cos(math.radians(a[0])))
            steps = int(metres / 50)  # 5 m/s, a fix each 10 s
            for i in range(1, steps + 1):
                f = i / steps
                fix(a[0] + (b[0] - a[0]) * f, a[1] + (b[1] - a[1]) * f + 0.0008 * math.sin(f * math.pi), 5.0, course)
        stay(dock, 90 * 60)
        trip(dock, upriver, 35.0)
        stay(upriver, 75 * 60)
        trip(upriver, downriver, 225.0)
        stay(downriver, 40 * 60)
        directory = os.path.join(self.replay.directory, "state", "track")
        os.makedirs(directory, mode=0o700, exist_ok=True)
        name = time.strftime("%Y-%m-%d", time.gmtime(start)) + ".track"
        with open(os.path.join(directory, name), "wb") as file:
            for record in records:
                file.write(b"%08x " % crc32c(record) + record + b"\n")
        os.chmod(os.path.join(directory, name), 0o600)
        return date

    @staticmethod
    def day_range(date: str):
        """Local midnight of `date` and of the day after, as the page computes them."""
        year, month, day = (int(part) for part in date.split("-"))
        return tuple(int(time.mktime((year, month, d, 0, 0, 0, 0, 0, -1))) for d in (day, day + 1))

    def test_9a_day_of_the_timeline_visits_trips_callout_and_picker(self) -> None:
        """The day picker shows a day's visits (numbered, with MapViewPlus callouts: place, arrival–departure in
        the zone of where it happened, duration) and the trips between them along the track, as the daemon's
        `visits`, `trips` and `track` ops give them; the day after has nothing; bad ranges are refused."""
        from zoneinfo import ZoneInfo
        date = self.write_day()
        # aklocd finds the day files when it starts (as after a restore from a backup).
        self.replay.restart_daemon()
        since, until = self.day_range(date)
        ok, visits = daemon_call(self.replay.socket, "visits", since=since, until=until)
        self.assertTrue(ok, visits)
        ok, trips = daemon_call(self.replay.socket, "trips", since=since, until=until)
        self.assertTrue(ok, trips)
        visits, trips = visits["visits"], trips["trips"]
        self.assertEqual((len(visits), len(trips)), (3, 2), (visits, trips))  # what was written; the detector's own
        self.assertEqual(visits[0].get("place"), "Dock")

        self.open_page(self.url)
        self.wait("window.akloc.location", message="a first position over /events")
        self.driver.get_log("browser")
        self.driver.execute_script("const p = document.getElementById('akloc-day-picker'); p.value = arguments[0];"
                                   "p.dispatchEvent(new Event('change'))", date)
        self.wait("window.akloc.day.date === %r && window.akloc.day.visits + window.akloc.day.trips > 0" % date,
                  message="the day drawn")
        day = self.driver.execute_script("const d = window.akloc.day; return {visits: d.visits, trips: d.trips,"
                                         " lines: d.lines, following: window.akloc.following,"
                                         " markers: d.markers.map((m) => [m.getLatLng().lat, m.getLatLng().lng]),"
                                         " summary: document.getElementById('akloc-day-summary').textContent}")
        self.assertEqual(day["visits"], len(visits))
        self.assertEqual(day["trips"], len(trips))
        self.assertFalse(day["following"])  # the day is in view, not the live position
        for marker, visit in zip(day["markers"], visits):
            self.assertAlmostEqual(marker[0], visit["coordinate"]["latitude"], places=9)
            self.assertAlmostEqual(marker[1], visit["coordinate"]["longitude"], places=9)
        # Each trip is drawn along the track aklocd recorded between its start and end.
        for line, trip in zip(day["lines"], trips):
            ok, points = daemon_call(self.replay.socket, "track", since=trip["start"], until=trip["end"])
            self.assertTrue(ok, points)
            self.assertEqual(line["points"], len(points["points"]))
            self.assertIn("%.1f km" % (trip["distance"] / 1000), line["text"])
        self.assertEqual(len(self.driver.find_elements(By.CSS_SELECTOR, "path.akloc-trip")), len(trips))
        self.assertIn("%d visits, %d trips" % (len(visits), len(trips)), day["summary"])

        # The first visit's callout, as MapViewPlus draws it: the saved place, arrival–departure in the
        # visit's own time zone, and how long.
        first = visits[0]
        zone = ZoneInfo(first["timeZone"]["identifier"])
        def clock(text):
            from datetime import datetime
            return datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(zone).strftime("%H:%M")
        from datetime import datetime
        minutes = round((datetime.fromisoformat(first["departure"].replace("Z", "+00:00")) -
                         datetime.fromisoformat(first["arrival"].replace("Z", "+00:00"))).total_seconds() / 60)
        duration = "%d min" % minutes if minutes < 60 else "%d h" % (minutes // 60) + (
            " %d min" % (minutes % 60) if minutes % 60 else "")
        self.driver.find_element(By.CSS_SELECTOR, ".akloc-visit[data-visit='1']").click()
        self.wait("window.akloc.callout && window.akloc.callout.shown && "
                  "window.akloc.callout.shown.playState === 'finished'", message="the callout settled")
        title = self.driver.find_element(By.CSS_SELECTOR, ".akloc-callout-title").text
        subtitle = self.driver.find_element(By.CSS_SELECTOR, ".akloc-callout-subtitle").text
        self.assertEqual(title, "Dock")
        self.assertEqual(subtitle, "%s–%s · %s" % (clock(first["arrival"]), clock(first["departure"]), duration))
        self.screenshot("day.png")

        # The picker: the day after shows what the ops give for it (the last stay's trip away from it, whose
        # path is unknown, reaches into it: the replay's fixes today are elsewhere); back again, the same day.
        year, month, day_of_month = (int(part) for part in date.split("-"))
        after = time.strftime("%Y-%m-%d", time.localtime(time.mktime((year, month, day_of_month + 1, 12, 0, 0, 0, 0, -1))))
        after_since, after_until = self.day_range(after)
        expected = [len(daemon_call(self.replay.socket, op, since=after_since, until=after_until)[1][op])
                    for op in ("visits", "trips")]
        self.driver.find_element(By.ID, "akloc-day-next").click()
        self.wait("window.akloc.day.date === %r" % after, message="the day after drawn")
        self.assertEqual(self.driver.find_element(By.ID, "akloc-day-picker").get_attribute("value"), after)
        self.assertEqual(self.driver.execute_script("return [window.akloc.day.visits, window.akloc.day.trips]"),
                         expected)
        self.assertEqual(len(self.driver.find_elements(By.CSS_SELECTOR, ".akloc-visit")), expected[0])
        self.driver.find_element(By.ID, "akloc-day-previous").click()
        self.wait("window.akloc.day.date === %r && window.akloc.day.visits === %d" % (date, len(visits)))
        self.assertEqual(self.severe_console_entries(), [])

        # Bad ranges: 400 naming the field; the page server goes on.
        for query, word in (("since=abc&until=1", b"since"), ("since=1", b"until"), ("until=5", b"since"),
                            ("since=10&until=5", b"before until"), ("since=0&until=999999", b"48 h"),
                            ("since=1e3&until=2000", b"since"), ("since=-1&until=5", b"since"),
                            ("since=1&until=99999999999999999999", b"until")):
            status, body = self.get("/day.geojson?" + query)
            self.assertEqual(status, 400, query)
            self.assertIn(word, body, query)
        status, _ = self.get("/day.geojson?since=%d&until=%d" % (since, until))
        self.assertEqual(status, 200)

        # A snapshot of the day: inlined, drawn from file://, its picker showing the day and disabled.
        output = os.path.join(self.directory, "day.html")
        subprocess.run([self.akloc, "--socket", self.replay.socket, "map", "--output", output, "--day", date,
                        "--data-dir", os.path.join(REPOSITORY, "data")], check=True, capture_output=True, timeout=60)
        self.driver.get_log("browser")
        self.open_page("file://" + output)
        self.wait("window.akloc.day.date === %r" % date)
        self.assertEqual(self.driver.execute_script("return [window.akloc.day.visits, window.akloc.day.trips]"),
                         [len(visits), len(trips)])
        picker = self.driver.find_element(By.ID, "akloc-day-picker")
        self.assertEqual((picker.get_attribute("value"), picker.is_enabled()), (date, False))
        self.screenshot("day-snapshot.png")
        self.assertEqual(self.severe_console_entries(), [])
        # A day that does not exist is refused before anything is asked.
        result = subprocess.run([self.akloc, "--socket", self.replay.socket, "map", "--output", output,
                                 "--day", "2025-02-30"], capture_output=True, timeout=30)
        self.assertEqual(result.returncode, 64, result)  # EX_USAGE, as every usage error
        self.assertIn(b"--day: 2025-02-30 is not a day of the calendar", result.stderr)

    # MARK: the sky panel

    def test_9b_the_sky_panel_plots_the_receivers_satellites(self) -> None:
        """A receiver with satellites in its SKY reports (haicom-305N, replayed by its own gpsd and aklocd): the
        panel shows what aklocd's `satellites` key path says, each satellite where its elevation and azimuth put
        it on the polar plot (north up, the horizon at radius 90), used ones filled; a snapshot has it too."""
        replay = Replay(require_tools(self), "haicom-305N", 0.2,
                        config="[geo]\ndata-dir = %s\n" % os.path.join(REPOSITORY, "data"))
        self.addCleanup(replay.stop)
        log = open(os.path.join(self.directory, "sky-map.log"), "w+b")
        self.addCleanup(log.close)
        server = subprocess.Popen([self.akloc, "--socket", replay.socket, "map", "--listen", "127.0.0.1:0",
                                   "--data-dir", os.path.join(REPOSITORY, "data")],
                                  stdout=subprocess.PIPE, stderr=log, start_new_session=True)
        self.addCleanup(lambda: _kill_group(server))
        self.addCleanup(server.stdout.close)
        url = server.stdout.readline().decode().strip()
        self.assertTrue(url.startswith("http://"), url)
        self.driver.get_log("browser")
        self.open_page(url)
        # Once the receiver has a fix: satellites in use and in view, the map on the position.
        self.wait("window.akloc.sky.value && window.akloc.sky.value.used > 0 && window.akloc.location", timeout=60,
                  message="satellites in use plotted")

        def expected_plot(value):
            plotted = []
            for satellite in value["satellites"]:
                elevation, azimuth = satellite.get("elevation"), satellite.get("azimuth")
                if not isinstance(elevation, (int, float)) or not isinstance(azimuth, (int, float)):
                    continue
                if not 0 <= elevation <= 90:
                    continue
                r = 90 * (90 - elevation) / 90
                plotted.append((satellite["prn"], r * math.sin(math.radians(azimuth)),
                                -r * math.cos(math.radians(azimuth)), bool(satellite.get("used"))))
            return sorted(plotted)

        def page_plot():
            return sorted((p["prn"], p["x"], p["y"], p["used"]) for p in
                          self.driver.execute_script("return window.akloc.sky.plotted"))

        # What the page shows is aklocd's value: both read until they are of the same SKY report.
        seen = {}
        def same_report(driver) -> bool:
            ok, sky = daemon_call(replay.socket, "get", keyPath="satellites")
            self.assertTrue(ok, sky)
            seen["shown"] = driver.execute_script("return window.akloc.sky.value")
            return seen["shown"] == sky
        WebDriverWait(self.driver, 20, poll_frequency=0.05).until(same_report, "the page shows aklocd's satellites")
        shown = seen["shown"]
        plotted = page_plot()
        self.assertEqual([p[0] for p in plotted], [p[0] for p in expected_plot(shown)])
        for got, want in zip(plotted, expected_plot(shown)):
            self.assertAlmostEqual(got[1], want[1], places=6)
            self.assertAlmostEqual(got[2], want[2], places=6)
            self.assertEqual(got[3], want[3])
        self.assertGreater(len(plotted), 3)
        used = self.driver.execute_script("return [...document.querySelectorAll('#akloc-sky-plot .akloc-sat-used')]"
                                          ".map((g) => Number(g.dataset.prn)).sort((a, b) => a - b)")
        self.assertEqual(used, sorted(p[0] for p in plotted if p[3]))
        caption = self.driver.find_element(By.ID, "akloc-sky-caption").text
        self.assertIn("%d used of %d" % (shown["used"], shown["visible"]), caption)
        self.screenshot("sky.png")
        # Collapsed and opened again by its header.
        toggle = self.driver.find_element(By.ID, "akloc-sky-toggle")
        toggle.click()
        self.assertFalse(self.driver.find_element(By.ID, "akloc-sky-plot").is_displayed())
        toggle.click()
        self.assertTrue(self.driver.find_element(By.ID, "akloc-sky-plot").is_displayed())
        self.assertEqual(self.severe_console_entries(), [])

        # The snapshot holds the sky of its moment, drawn the same way.
        output = os.path.join(self.directory, "sky.html")
        subprocess.run([self.akloc, "--socket", replay.socket, "map", "--output", output,
                        "--data-dir", os.path.join(REPOSITORY, "data")], check=True, capture_output=True, timeout=60)
        with open(output, encoding="utf-8") as file:
            config = json.loads(re.search(r'<script id="akloc-config" type="application/json">(.*?)</script>',
                                          file.read(), re.S).group(1))
        self.open_page("file://" + output)
        self.wait("window.akloc.sky.value !== null")
        self.assertEqual(self.driver.execute_script("return window.akloc.sky.value"), config["snapshot"]["satellites"])
        self.assertEqual([p[0] for p in page_plot()], [p[0] for p in expected_plot(config["snapshot"]["satellites"])])
        self.assertEqual(self.severe_console_entries(), [])


def crc32c(data: bytes) -> int:
    """CRC-32C (Castagnoli, reflected 0x82F63B78), the journal's checksum, computed here bit by bit."""
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


if __name__ == "__main__":
    unittest.main()
