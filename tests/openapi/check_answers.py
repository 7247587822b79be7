#!/usr/bin/env python3
"""The ctest openapi_answers: every answer the server suites received
(tests/support/answers.hpp recorded them) against docs/openapi.json.

For each answer to a route the document has: its status must be one of the
operation's responses (exactly, or its class: 4XX, 5XX), its media type one
of that response's, and a JSON body must be valid against the response's
JSON Schema (draft 2020-12, python3-jsonschema). Answers to paths outside
the document (dashboard pages, no route) are counted apart; answers to a
documented path with a method it lacks (405s, HEAD) count as not
validated. Fails on any invalid answer, when nothing was recorded, or when
fewer than --min-share of the answers to documented paths were validated.
The files read are removed, so that the next run starts afresh; files
older than every --newer-than file (records of an older build) are removed
unread.

Usage: check_answers.py --document docs/openapi.json --answers DIR
                        [--newer-than FILE...] [--min-share 0.95] [--name sqlite]
"""
import argparse
import collections
import json
import os
import re
import sys

import jsonschema


def operations(doc):
    """[(regex, path template, {method: operation})], literal paths first."""
    out = []
    for template, item in doc["paths"].items():
        pattern = "^" + re.sub(r"\\\{[a-z_]+\\\}", "[^/]+", re.escape(template)) + "$"
        out.append((re.compile(pattern), template, item))
    out.sort(key=lambda t: t[1].count("{"))
    return out


def media_type(content_type):
    return content_type.split(";")[0].strip().lower()


def check(doc, ops, record, validators):
    """None when the answer is valid, 'outside' / 'unvalidated', or a failure message."""
    path = record["target"].split("?")[0]
    method = record["method"].lower()
    for regex, template, item in ops:
        if not regex.match(path):
            continue
        op = item.get(method)
        if op is None:
            return "unvalidated", template
        status = str(record["status"])
        responses = op["responses"]
        response = responses.get(status) or responses.get(status[0] + "XX") or responses.get("default")
        where = f"{record['method']} {template} -> {status}"
        if response is None:
            return f"{where}: status not in the document ({', '.join(responses)})", template
        media = media_type(record["content_type"])
        content = response.get("content", {})
        if media not in content:
            return f"{where}: content type '{media}' not in the document ({', '.join(content)})", template
        if media != "application/json":
            return None, template
        try:
            body = json.loads(record["body"])
        except ValueError as e:
            return f"{where}: the body is not JSON: {e}", template
        key = json.dumps(content[media].get("schema", {}), sort_keys=True)
        if key not in validators:
            root = {"$schema": "https://json-schema.org/draft/2020-12/schema",
                    "components": doc["components"], "allOf": [content[media].get("schema", {})]}
            validators[key] = jsonschema.Draft202012Validator(root)
        errors = sorted(validators[key].iter_errors(body), key=lambda e: list(e.absolute_path))
        if errors:
            e = errors[0]
            at = "/".join(str(p) for p in e.absolute_path) or "(the body)"
            return f"{where}: {at}: {e.message[:300]}", template
        return None, template
    return "outside", None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--document", required=True)
    ap.add_argument("--answers", required=True)
    ap.add_argument("--newer-than", nargs="*", default=[])
    ap.add_argument("--min-share", type=float, default=0.95)
    ap.add_argument("--name", default="")
    args = ap.parse_args()
    name = f"openapi_answers{' (' + args.name + ')' if args.name else ''}"

    with open(args.document, encoding="utf-8") as f:
        doc = json.load(f)
    ops = operations(doc)
    since = max((os.path.getmtime(p) for p in args.newer_than if os.path.exists(p)), default=0)
    files = sorted(os.path.join(args.answers, n) for n in os.listdir(args.answers)) \
        if os.path.isdir(args.answers) else []

    counts = collections.Counter()
    per_route = collections.Counter()
    failures = []
    validators = {}
    for file in files:
        stale = os.path.getmtime(file) < since
        if not stale:
            with open(file, encoding="utf-8") as f:
                for n, line in enumerate(f, 1):
                    try:
                        record = json.loads(line)
                    except ValueError:
                        failures.append(f"{file}:{n}: not a JSON line (a test killed while writing?)")
                        continue
                    result, template = check(doc, ops, record, validators)
                    if result == "outside":
                        counts["outside"] += 1
                        continue
                    counts["documented"] += 1
                    if result is None:
                        counts["validated"] += 1
                        per_route[f"{record['method']} {template}"] += 1
                    elif result == "unvalidated":
                        counts["unvalidated"] += 1
                    else:
                        failures.append(result)
        os.remove(file)

    documented = counts["documented"]
    share = counts["validated"] / documented if documented else 0.0
    print(f"{name}: {documented + counts['outside']} answers recorded; {documented} to routes in "
          f"{args.document}, {counts['validated']} validated ({100 * share:.1f}%), {counts['unvalidated']} "
          f"to a method the path lacks, {len(failures)} invalid; {counts['outside']} outside the API "
          f"(pages, no route)")
    covered = {f"{m.upper()} {t}" for _, t, item in ops for m in item}
    missing = sorted(covered - set(per_route))
    if missing:
        print(f"{name}: operations no test answer reached: {', '.join(missing)}")
    for message in collections.Counter(failures).most_common(20):
        print(f"{name}: INVALID ({message[1]}x) {message[0]}")
    if documented == 0:
        print(f"{name}: no answers recorded in {args.answers}: the server suites did not run", file=sys.stderr)
        return 1
    if failures:
        return 1
    if share < args.min_share:
        print(f"{name}: {100 * share:.1f}% validated is under {100 * args.min_share:.0f}%", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
