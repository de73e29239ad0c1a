"""Timelines of networked sessions from both sides' events.jsonl (used by
benches/session_vs_reference.sh).

Input lines: IMPL MODE LAUNCH_UNIX_SECONDS HOST_SESSION_DIR GUEST_SESSION_DIR, where LAUNCH
is when the guest's `join` was started. Prints, per implementation and control mode, the
median (min-max) in milliseconds of:
  join -> dial start   guest process start, invitation fetch, protocol, endpoint bind
  dial                 connect + stream (the guest's peer_connected event, ours only)
  handshake            dial done -> guest sent _session_ready / host received it
  first frame          guest's peer_joined -> its first engine frame sent / host received it
  join -> first frame  what a user waits for before the first move reaches the host
  game                 guest's peer_joined -> the last side's session_ended
  join -> end          the whole session as the guest's user sees it
  per round            game / rounds (the host's round_result frames, else its frames / 3)
  rounds only / round  first -> last engine frame (either side), per round
  end                  last engine frame -> the last side's session_ended
  transit h->g, g->h   a frame logged as sent by one side -> logged as received by the other
                       (the receiver logs it after validating and displaying it)
  step host, guest     a side logged a frame as received -> logged its next frame as sent
The reference emits no peer_connected, so its dial and handshake are only shown together.
"""

import json
import statistics
import sys
from collections import defaultdict
from datetime import datetime
from pathlib import Path


def events(session_dir):
    with open(Path(session_dir) / "events.jsonl", encoding="utf-8") as lines:
        for line in lines:
            event = json.loads(line)
            event["t"] = datetime.fromisoformat(event["ts"]).timestamp()
            yield event


def first(log, kind, direction=None):
    for event in log:
        if event["type"] != kind:
            continue
        if direction and event.get("data", {}).get("direction") != direction:
            continue
        return event
    return None


def messages(log, direction):
    return [e for e in log if e["type"] == "protocol_message" and e["data"].get("direction") == direction]


def steps(log):
    """Received -> the next sent, for every received frame followed by a sent one."""
    out, received = [], None
    for event in log:
        if event["type"] != "protocol_message":
            continue
        if event["data"].get("direction") == "received":
            received = event["t"]
        elif received is not None:
            out.append((event["t"] - received) * 1000.0)
            received = None
    return out


def round_costs(host, guest, game_ms):
    """Where a round's time goes: the median transit each way and the median step per side."""
    row = {}
    for name, sender, receiver in (("transit h->g", host, guest), ("transit g->h", guest, host)):
        pairs = zip(messages(sender, "sent"), messages(receiver, "received"))
        transits = [(b["t"] - a["t"]) * 1000.0 for a, b in pairs]
        if transits:
            row[name] = statistics.median(transits)
    for name, log in (("step host", host), ("step guest", guest)):
        gaps = steps(log)
        if gaps:
            row[name] = statistics.median(gaps)
    sent = messages(host, "sent")
    rounds = sum(1 for e in sent if e["data"]["msg"].get("action") == "round_result") or len(sent) // 3
    frames = sorted(e["t"] for e in host + guest if e["type"] == "protocol_message")
    if rounds and frames:
        row["per round"] = game_ms / rounds
        row["rounds only / round"] = (frames[-1] - frames[0]) * 1000.0 / rounds
        ended = max(e["t"] for e in host + guest if e["type"] == "session_ended")
        row["end"] = (ended - frames[-1]) * 1000.0
    return row


def timeline(launch, host_dir, guest_dir):
    host, guest = list(events(host_dir)), list(events(guest_dir))
    ms = lambda a, b: (b - a) * 1000.0
    joined = first(guest, "peer_joined")["t"]
    host_joined = first(host, "peer_joined")["t"]
    sent = first(guest, "protocol_message", "sent")["t"]
    received = first(host, "protocol_message", "received")["t"]
    ended = max(e["t"] for e in host + guest if e["type"] == "session_ended")
    row = {
        "join -> first frame": ms(launch, received),
        "first frame (guest sent)": ms(joined, sent),
        "first frame (host received)": ms(joined, received),
        "game": ms(joined, ended),
        "join -> end": ms(launch, ended),
    }
    row.update(round_costs(host, guest, ms(joined, ended)))
    connected = first(guest, "peer_connected")
    if connected:
        dial = connected["data"]["dial_ms"]
        row["join -> dial start"] = ms(launch, connected["t"]) - dial
        row["dial"] = dial
        row["handshake (guest sent ready)"] = ms(connected["t"], joined)
        row["handshake (host got ready)"] = ms(connected["t"], host_joined)
    else:
        row["join -> handshake done"] = ms(launch, joined)
    return row


ORDER = [
    "join -> dial start",
    "dial",
    "handshake (guest sent ready)",
    "handshake (host got ready)",
    "join -> handshake done",
    "first frame (guest sent)",
    "first frame (host received)",
    "join -> first frame",
    "game",
    "join -> end",
    "per round",
    "rounds only / round",
    "end",
    "transit h->g",
    "transit g->h",
    "step host",
    "step guest",
]


def main():
    runs = defaultdict(list)
    with open(sys.argv[1], encoding="utf-8") as lines:
        for line in lines:
            impl, mode, launch, host_dir, guest_dir = line.split()
            runs[(impl, mode)].append(timeline(float(launch), host_dir, guest_dir))
    medians = {}
    for (impl, mode), rows in sorted(runs.items()):
        print(f"{impl}, {mode} ({len(rows)} runs): median (min-max) ms")
        for metric in ORDER:
            values = [row[metric] for row in rows if metric in row]
            if values:
                median = statistics.median(values)
                medians[(impl, mode, metric)] = median
                print(f"  {metric:30} {median:9.2f}  ({min(values):.2f}-{max(values):.2f})")
    for mode in sorted({mode for _, mode in runs}):
        for impl in ("before", "ours"):
            for metric in ("join -> end", "game"):
                ours, ref = medians.get((impl, mode, metric)), medians.get(("reference", mode, metric))
                if ours and ref:
                    print(f"speedup, {impl}, {mode}, {metric}: {ref / ours:.1f}x (goal: >= 10x)")


if __name__ == "__main__":
    main()
