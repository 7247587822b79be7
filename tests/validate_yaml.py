#!/usr/bin/env python3
"""Validates perfgate's GitHub Action and workflow files.

Usage: validate_yaml.py [SOURCE_DIR]

Every file must parse as YAML and have the shape GitHub expects (an action:
name, inputs, outputs with values, composite steps with a shell; a workflow:
triggers and jobs with steps). No `run:` block may interpolate `${{ inputs.* }}`
or `${{ github.event.* }}`: GitHub substitutes those into the script text
before the shell sees it, so a crafted PR title or input becomes shell code
(GitHub's "Security hardening for GitHub Actions", script injection). Inputs
must reach scripts through `env:`. Exits 1 listing every problem.
"""
import glob
import os
import re
import sys

import yaml

INJECTION = re.compile(r"\$\{\{\s*(inputs\.|github\.event\.|github\.head_ref)")
EXPR = re.compile(r"\$\{\{\s*inputs\.([A-Za-z0-9_-]+)")


def check_run(where, step, problems):
    run = step.get("run")
    if run is None:
        return
    if not isinstance(run, str):
        problems.append(f"{where}: run: must be a string")
        return
    for m in INJECTION.finditer(run):
        line = run[: m.start()].count("\n") + 1
        problems.append(f"{where}: run: line {line} interpolates '{m.group(0)}...' (pass it through env:)")


def check_steps(where, steps, problems, composite=False, declared_inputs=None):
    if not isinstance(steps, list) or not steps:
        problems.append(f"{where}: steps must be a non-empty list")
        return
    for i, step in enumerate(steps):
        sw = f"{where}: steps[{i}]" + (f" ({step.get('name')})" if isinstance(step, dict) and step.get("name") else "")
        if not isinstance(step, dict):
            problems.append(f"{sw}: not a mapping")
            continue
        if ("run" in step) == ("uses" in step):
            problems.append(f"{sw}: needs exactly one of run: or uses:")
        if composite and "run" in step and "shell" not in step:
            problems.append(f"{sw}: composite run steps need shell:")
        check_run(sw, step, problems)
        if declared_inputs is not None:
            text = yaml.safe_dump(step)
            for name in EXPR.findall(text):
                if name not in declared_inputs:
                    problems.append(f"{sw}: uses undeclared input '{name}'")


def check_action(path, doc, problems):
    for key in ("name", "description", "runs"):
        if key not in doc:
            problems.append(f"{path}: missing '{key}'")
    inputs = doc.get("inputs") or {}
    for name, spec in inputs.items():
        if not isinstance(spec, dict) or "description" not in spec:
            problems.append(f"{path}: input '{name}' needs a description")
    for name, spec in (doc.get("outputs") or {}).items():
        if not isinstance(spec, dict) or "value" not in spec:
            problems.append(f"{path}: output '{name}' of a composite action needs value:")
    for required in ("verdict", "report-path", "comparison-url"):
        if required not in (doc.get("outputs") or {}):
            problems.append(f"{path}: missing output '{required}'")
    runs = doc.get("runs") or {}
    if runs.get("using") != "composite":
        problems.append(f"{path}: runs.using must be 'composite'")
    check_steps(f"{path}: runs", runs.get("steps"), problems, composite=True, declared_inputs=set(inputs))


def check_workflow(path, doc, problems):
    # YAML 1.1 (PyYAML) reads the key `on` as the boolean True.
    triggers = doc.get("on", doc.get(True))
    if not triggers:
        problems.append(f"{path}: no triggers (on:)")
    jobs = doc.get("jobs")
    if not isinstance(jobs, dict) or not jobs:
        problems.append(f"{path}: no jobs")
        return
    for name, job in jobs.items():
        if not isinstance(job, dict):
            problems.append(f"{path}: job '{name}' is not a mapping")
            continue
        if "runs-on" not in job and "uses" not in job:
            problems.append(f"{path}: job '{name}' has no runs-on")
        if "steps" in job:
            check_steps(f"{path}: jobs.{name}", job["steps"], problems)


def validate(root):
    problems = []
    action = os.path.join(root, "ci", "action.yml")
    workflows = sorted(glob.glob(os.path.join(root, "ci", "examples", "*.yml")) +
                       glob.glob(os.path.join(root, ".github", "workflows", "*.yml")))
    if not os.path.exists(action):
        problems.append(f"{action}: missing")
    if not workflows:
        problems.append(f"{root}: no workflow files found")
    for path in ([action] if os.path.exists(action) else []) + workflows:
        try:
            with open(path, encoding="utf-8") as f:
                doc = yaml.safe_load(f)
        except yaml.YAMLError as e:
            problems.append(f"{path}: not valid YAML: {e}")
            continue
        if not isinstance(doc, dict):
            problems.append(f"{path}: top level is not a mapping")
            continue
        (check_action if path == action else check_workflow)(path, doc, problems)
    return problems, 1 + len(workflows)


def self_test():
    """The checks must catch what they are for (a check that cannot fail is no check)."""
    bad = yaml.safe_load(
        "on: push\njobs:\n  j:\n    runs-on: x\n    steps:\n"
        "      - run: echo '${{ github.event.pull_request.title }}'\n"
        "      - run: echo ${{inputs.name}}\n"
        "      - uses: a/b@v1\n        run: both\n")
    problems = []
    check_workflow("self-test", bad, problems)
    assert len(problems) == 3, problems
    assert "interpolates '${{ github.event." in problems[0], problems
    assert "interpolates '${{inputs." in problems[1], problems
    assert "exactly one of run: or uses:" in problems[2], problems
    ok = yaml.safe_load("on: push\njobs:\n  j:\n    runs-on: x\n    steps:\n"
                        "      - run: echo \"$T\"\n        env:\n          T: ${{ github.event.pull_request.title }}\n")
    problems = []
    check_workflow("self-test", ok, problems)
    assert problems == [], problems


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    self_test()
    problems, count = validate(root)
    for p in problems:
        print(p, file=sys.stderr)
    if problems:
        return 1
    print(f"validate_yaml: {count} files OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
