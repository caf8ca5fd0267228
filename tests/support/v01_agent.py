#!/usr/bin/env python3
"""An independent v0.1 file-based handoff agent, written for Baton's tests
without any of Baton's code: Python 3 standard library only, like v0.1's
reference implementation. It writes handoffs the way such tools do (null for
a missing to_agent, Python's isoformat() times, its own extra field, its own
key order), polls for changes (v0.1 has no notification), and takes the same
exclusive-create lock file (<task_id>.json.lock) Baton takes before a write.

  v01_agent.py offer    DIR DESCRIPTION --from AGENT [--to AGENT] [--context k=v ...]
  v01_agent.py wait     DIR TASK_ID --status STATUS [--timeout SECONDS]
  v01_agent.py accept   DIR TASK_ID --agent AGENT
  v01_agent.py complete DIR TASK_ID [--context k=v ...]

Exit codes: 0 ok, 1 timeout or error, 2 refused (wrong status).
"""
import argparse
import datetime
import json
import os
import sys
import tempfile
import time
import uuid


def now():
    return datetime.datetime.now(datetime.timezone.utc).isoformat()


def path_of(directory, task_id):
    return os.path.join(directory, task_id + ".json")


def write_atomically(directory, task_id, record):
    fd, tmp = tempfile.mkstemp(prefix=".py-", suffix=".tmp", dir=directory)
    with os.fdopen(fd, "w") as f:
        json.dump(record, f, indent=2)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path_of(directory, task_id))


def take_lock(directory, task_id, timeout=5.0):
    lock = path_of(directory, task_id) + ".lock"
    deadline = time.time() + timeout
    while True:
        try:
            fd = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
            os.write(fd, json.dumps({"by": "v01_agent.py", "pid": os.getpid()}).encode())
            os.close(fd)
            return lock
        except FileExistsError:
            if time.time() > deadline:
                raise
            time.sleep(0.01)


def parse_context(pairs):
    out = {}
    for pair in pairs or []:
        key, _, value = pair.partition("=")
        out[key] = value
    return out


def offer(args):
    os.makedirs(args.dir, exist_ok=True)
    task_id = str(uuid.uuid4())
    stamp = now()
    record = {
        "task_id": task_id,
        "description": args.description,
        "status": "offered",
        "from_agent": args.from_agent,
        "to_agent": args.to_agent,
        "context": parse_context(args.context),
        "created_at": stamp,
        "updated_at": stamp,
        "agent_version": "v01_agent.py/1",
    }
    write_atomically(args.dir, task_id, record)
    print(task_id)
    return 0


def wait(args):
    deadline = time.time() + args.timeout
    while time.time() < deadline:
        try:
            with open(path_of(args.dir, args.task_id)) as f:
                record = json.load(f)
            if record.get("status") == args.status:
                json.dump(record, sys.stdout)
                print()
                return 0
        except (OSError, ValueError):
            pass  # not there yet, or caught mid-write by a writer that is not atomic
        time.sleep(0.05)
    print("timed out waiting for status " + args.status, file=sys.stderr)
    return 1


def complete(args):
    lock = take_lock(args.dir, args.task_id)
    try:
        with open(path_of(args.dir, args.task_id)) as f:
            record = json.load(f)
        if record.get("status") != "accepted":
            print("cannot complete: status is " + str(record.get("status")), file=sys.stderr)
            return 2
        record["status"] = "completed"
        record["updated_at"] = now()
        context = record.get("context") or {}
        context.update(parse_context(args.context))
        record["context"] = context
        write_atomically(args.dir, args.task_id, record)
        return 0
    finally:
        os.unlink(lock)


def accept(args):
    lock = take_lock(args.dir, args.task_id)
    try:
        with open(path_of(args.dir, args.task_id)) as f:
            record = json.load(f)
        if record.get("status") != "offered":
            print("cannot accept: status is " + str(record.get("status")), file=sys.stderr)
            return 2
        if record.get("to_agent") and record.get("to_agent") != args.agent:
            print("cannot accept: offered to " + str(record.get("to_agent")), file=sys.stderr)
            return 2
        record["status"] = "accepted"
        record["to_agent"] = args.agent
        record["updated_at"] = now()
        write_atomically(args.dir, args.task_id, record)
        return 0
    finally:
        os.unlink(lock)


def main():
    parser = argparse.ArgumentParser(prog="v01_agent.py")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("offer")
    p.add_argument("dir")
    p.add_argument("description")
    p.add_argument("--from", dest="from_agent", required=True)
    p.add_argument("--to", dest="to_agent", default=None)
    p.add_argument("--context", action="append")
    p = sub.add_parser("wait")
    p.add_argument("dir")
    p.add_argument("task_id")
    p.add_argument("--status", required=True)
    p.add_argument("--timeout", type=float, default=10.0)
    p = sub.add_parser("accept")
    p.add_argument("dir")
    p.add_argument("task_id")
    p.add_argument("--agent", required=True)
    p = sub.add_parser("complete")
    p.add_argument("dir")
    p.add_argument("task_id")
    p.add_argument("--context", action="append")
    args = parser.parse_args()
    return {"offer": offer, "wait": wait, "accept": accept, "complete": complete}[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
