#!/usr/bin/env python3
"""Records the session transcript of docs/protocol.md from a live aklocd.

usage: record-transcript.py SOCKET   (run it as a user without a rule, e.g.
`setpriv --reuid nobody --regid nogroup --clear-groups`, so the
authorization sequence shows). Prints `>` for what it sends, `<` for what
the daemon sends, in the order they happened.
"""
import json
import socket
import sys

sock = socket.socket(socket.AF_UNIX)
sock.connect(sys.argv[1])
stream = sock.makefile("rwb")


def receive(until=None, count=1):
    """Prints daemon lines until one satisfies `until` (or `count` lines)."""
    while True:
        line = stream.readline()
        if not line:
            print("(the daemon closed the connection)")
            return None
        text = line.decode().rstrip("\n")
        print("< " + text)
        message = json.loads(text)
        if until is None:
            count -= 1
            if count == 0:
                return message
        elif until(message):
            return message


def send(text, reply=True):
    print("> " + text)
    stream.write((text + "\n").encode())
    stream.flush()
    if reply:
        return receive(lambda m: "ok" in m)


receive()
send('{"id":1,"op":"startUpdatingLocation"}')
send('{"id":2,"op":"requestAuthorization","type":"whenInUse"}')
send('{"id":3,"op":"startUpdatingLocation","policy":{"minInterval":5,"maxInterval":60}}')
receive(lambda m: m.get("event") == "didGetFirstLocation")
receive(lambda m: m.get("event") == "didUpdateLocation" and "afterTimeInterval" in m)
send('{"id":"s","op":"get","keyPath":"myLocation.speed"}')
send('{"op":"observe","keyPath":"state","options":["initial","old"]}')
send('{"id":4,"op":"get","keyPath":"myLocation.altitud"}')
send("this is not json")
send('{"id":5,"op":"pause"}')
receive(lambda m: m.get("event") == "didUpdateLocation" and "afterTimeInterval" in m)
receive(lambda m: m.get("notification") == "daemonStopping")
receive(lambda m: False)
