"""Proxima against a real Home Assistant: mosquitto, HA onboarded through its REST API, the
MQTT integration added through its config flow, `proxima gateway --simulate … --mqtt …`, then
checks through HA's own API: Proxima's entities exist with their names, are available, are
available again within 30 s of a broker restart, and HA's log says nothing about Proxima's
payloads. Exits non-zero on the first failed check."""

import json
import os
import pathlib
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request

ROOT = pathlib.Path(__file__).resolve().parent.parent
VENV = pathlib.Path(os.environ.get("PROXIMA_HA_VENV", pathlib.Path.home() / ".cache/proxima/ha-venv"))
PROXIMA = pathlib.Path(os.environ.get("PROXIMA_BINARY", ROOT / ".build/debug/proxima"))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


HASS_OUTPUT = None


def fail(message):
    print(f"FAIL: {message}", file=sys.stderr)
    if HASS_OUTPUT and HASS_OUTPUT.exists():
        print("Home Assistant said:\n" + HASS_OUTPUT.read_text(errors="replace")[-3000:], file=sys.stderr)
    sys.exit(1)


def request(base, method, path, body=None, token=None, form=False):
    data = None
    headers = {}
    if body is not None:
        if form:
            data = urllib.parse.urlencode(body).encode()
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        else:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
    if token:
        headers["Authorization"] = f"Bearer {token}"
    req = urllib.request.Request(base + path, data=data, method=method, headers=headers)
    with urllib.request.urlopen(req, timeout=30) as response:
        text = response.read().decode()
        return json.loads(text) if text else None


def wait_for(what, check, timeout):
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        try:
            result = check()
            if result:
                return result
        except (urllib.error.URLError, ConnectionError, OSError) as error:
            last = error
        time.sleep(0.5)
    fail(f"{what} within {timeout} s (last error: {last})")


class Broker:
    def __init__(self, folder):
        self.port = free_port()
        self.conf = folder / "mosquitto.conf"
        self.conf.write_text(f"listener {self.port} 127.0.0.1\nallow_anonymous true\npersistence true\n"
                             f"persistence_location {folder}/\nlog_dest file {folder}/mosquitto.log\n")
        os.chmod(folder, 0o777)
        self.process = None
        self.start()

    def start(self):
        self.process = subprocess.Popen(["/usr/sbin/mosquitto", "-c", str(self.conf)])
        wait_for("mosquitto accepting connections", lambda: socket.create_connection(("127.0.0.1", self.port), 1).close() or True, 10)

    def stop(self):
        self.process.send_signal(signal.SIGTERM)
        self.process.wait(30)


def main():
    work = pathlib.Path(tempfile.mkdtemp(prefix="proxima-ha-"))
    children = []
    try:
        broker = Broker(work)
        children.append(broker)
        port = free_port()
        config = work / "ha"
        config.mkdir()
        (config / "configuration.yaml").write_text(
            "homeassistant:\n  name: Proxima test\n"
            f"http:\n  server_host: 127.0.0.1\n  server_port: {port}\n"
            "api:\nconfig:\nonboarding:\nfrontend:\nlogger:\n  default: warning\n")
        started = time.monotonic()
        global HASS_OUTPUT
        HASS_OUTPUT = work / "hass.out"
        hass_output = open(HASS_OUTPUT, "w")
        hass = subprocess.Popen([str(VENV / "bin/hass"), "-c", str(config)], stdout=hass_output, stderr=subprocess.STDOUT)
        children.append(hass)
        base = f"http://127.0.0.1:{port}"
        wait_for("Home Assistant answering", lambda: request(base, "GET", "/api/onboarding") is not None, 600)
        print(f"Home Assistant up after {time.monotonic() - started:.0f} s")

        client = base + "/"
        code = request(base, "POST", "/api/onboarding/users",
                       {"client_id": client, "name": "Proxima", "username": "proxima", "password": "proxima-test-password", "language": "en"})["auth_code"]
        token = request(base, "POST", "/auth/token", {"grant_type": "authorization_code", "code": code, "client_id": client}, form=True)["access_token"]
        # The owner account is all the API needs; the other onboarding steps only set up the UI.

        flow = request(base, "POST", "/api/config/config_entries/flow", {"handler": "mqtt", "show_advanced_options": False}, token)
        while flow.get("type") == "form" or flow.get("type") == "menu":
            if flow.get("type") == "menu":
                flow = request(base, "POST", f"/api/config/config_entries/flow/{flow['flow_id']}", {"next_step_id": "broker"}, token)
                continue
            flow = request(base, "POST", f"/api/config/config_entries/flow/{flow['flow_id']}", {"broker": "127.0.0.1", "port": broker.port}, token)
        if flow.get("type") != "create_entry":
            fail(f"the MQTT config flow ended with {flow}")

        scenario = ROOT / "examples/retail.json"
        gateway = subprocess.Popen([str(PROXIMA), "gateway", "--simulate", str(scenario), "--receiver", "San Francisco till", "--speed", "1",
                                    "--no-stored-regions", "--mqtt", f"mqtt://127.0.0.1:{broker.port}/proxima", "--mqtt-name", "till"],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env={**os.environ, "PROXIMA_CONFIG_DIR": str(work / "proxima")})
        children.append(gateway)

        def proxima_states():
            states = request(base, "GET", "/api/states", token=token)
            # Entities of the gateway "till" (HA names them after the device and the entity).
            return [s for s in states if s["entity_id"].split(".")[1].startswith("ibeacon_") and "_till_" in s["entity_id"]]

        # The till hears three beacons of the retail scenario: a tracker, distance and RSSI each.
        wait_for("three Proxima device trackers in Home Assistant",
                 lambda: len([s for s in proxima_states() if s["entity_id"].startswith("device_tracker.")]) >= 3, 180)
        # Home Assistant subscribes to a new entity's availability topic after creating it.
        wait_for("Proxima's entities available", lambda: all(s["state"] != "unavailable" for s in proxima_states()), 30)
        entities = proxima_states()
        print(f"{len(entities)} Proxima entities: " + ", ".join(sorted(s["entity_id"] for s in entities)))
        unavailable = [s["entity_id"] for s in entities if s["state"] == "unavailable"]
        if unavailable:
            fail(f"unavailable before the restart: {unavailable}")
        names = sorted({s["attributes"].get("friendly_name", "") for s in entities})
        print("names: " + ", ".join(names))

        broker.stop()
        wait_for("entities unavailable while the broker is away",
                 lambda: all(s["state"] == "unavailable" for s in proxima_states()), 60)
        restarted = time.monotonic()
        broker.start()
        wait_for("every Proxima entity available again after the broker restart",
                 lambda: all(s["state"] != "unavailable" for s in proxima_states()), 30)
        print(f"every entity available again {time.monotonic() - restarted:.1f} s after the broker restarted")

        log = (config / "home-assistant.log").read_text(errors="replace") if (config / "home-assistant.log").exists() else ""
        complaints = [line for line in log.splitlines() if "proxima" in line.lower() and ("ERROR" in line or "WARNING" in line)]
        if complaints:
            fail("Home Assistant's log complains about Proxima:\n" + "\n".join(complaints[:20]))
        print("PASS")
    finally:
        for child in reversed(children):
            process = child.process if isinstance(child, Broker) else child
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
                try:
                    process.wait(30)
                except subprocess.TimeoutExpired:
                    process.kill()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    # A stopped run still stops its broker, Home Assistant and gateway.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    main()
