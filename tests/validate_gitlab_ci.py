#!/usr/bin/env python3
"""Structural check of perfgate's GitLab CI template (ci/gitlab/*.gitlab-ci.yml).

Usage: validate_gitlab_ci.py [SOURCE_DIR]

GitLab's own validator (the CI Lint API) needs a GitLab instance; this test
checks what GitLab documents for the keywords the template uses
(docs.gitlab.com/ci/yaml, cross-checked with the JSON schema GitLab ships in
app/assets/javascripts/editor/schema/ci.json): top-level keys are global
keywords or jobs; a job's keys are job keywords; a visible job has a script
(after `extends`); `rules` items are mappings of if/changes/exists/when/
allow_failure/variables/needs/interruptible with `when` in GitLab's set;
`artifacts` and `artifacts:reports` keys are GitLab's and `reports:junit` a
path or list of paths also listed in `artifacts:paths`; `variables` values
are strings; `stage` is one of the (default) stages; script items are
strings. And perfgate's own rules: no script line interpolates text a merge
request author controls (CI_MERGE_REQUEST_TITLE, CI_COMMIT_MESSAGE, ...),
the token is never echoed, and the junit report is the file the publish
step writes. Exits 1 listing every problem.
"""
import glob
import os
import re
import sys

import yaml

GLOBAL_KEYWORDS = {"default", "include", "stages", "variables", "workflow", "spec",
                   # deprecated globals, still accepted
                   "image", "services", "cache", "before_script", "after_script"}
JOB_KEYWORDS = {"after_script", "allow_failure", "artifacts", "before_script", "cache", "coverage",
                "dast_configuration", "dependencies", "environment", "extends", "hooks", "identity",
                "id_tokens", "image", "inherit", "interruptible", "manual_confirmation", "needs", "pages",
                "parallel", "release", "resource_group", "retry", "rules", "script", "run", "secrets",
                "services", "stage", "tags", "timeout", "trigger", "variables", "when", "only", "except"}
RULE_KEYS = {"if", "changes", "exists", "when", "allow_failure", "variables", "needs", "interruptible"}
RULE_WHEN = {"on_success", "on_failure", "always", "never", "manual", "delayed"}
ARTIFACT_KEYS = {"paths", "exclude", "expose_as", "name", "untracked", "when", "access", "expire_in",
                 "reports", "public"}
ARTIFACT_WHEN = {"on_success", "on_failure", "always"}
REPORT_KEYS = {"accessibility", "annotations", "junit", "browser_performance", "coverage_report",
               "codequality", "dotenv", "lsif", "sast", "dependency_scanning", "container_scanning", "dast",
               "license_management", "license_scanning", "requirements", "secret_detection", "metrics",
               "terraform", "cyclonedx", "load_performance", "repository_xray"}
DEFAULT_STAGES = [".pre", "build", "test", "deploy", ".post"]
# Predefined variables whose text the author of a merge request or commit writes.
AUTHOR_TEXT = re.compile(r"\$\{?(CI_MERGE_REQUEST_TITLE|CI_MERGE_REQUEST_DESCRIPTION|CI_COMMIT_MESSAGE|"
                         r"CI_COMMIT_TITLE|CI_COMMIT_DESCRIPTION|CI_COMMIT_TAG_MESSAGE)\b")
TOKEN_ECHO = re.compile(r"(echo|printf)[^\n]*PERFGATE_GITLAB_TOKEN")


def resolve(doc, name, seen=()):
    """A job with its `extends` chain merged in (GitLab's deep merge of mappings)."""
    job = doc.get(name)
    if not isinstance(job, dict):
        return {}
    parents = job.get("extends", [])
    if isinstance(parents, str):
        parents = [parents]
    out = {}
    for parent in parents:
        if parent in seen:
            continue
        merge(out, resolve(doc, parent, seen + (name,)))
    merge(out, {k: v for k, v in job.items() if k != "extends"})
    return out


def merge(into, other):
    for key, value in other.items():
        if isinstance(value, dict) and isinstance(into.get(key), dict):
            merge(into[key], value)
        else:
            into[key] = value


def check_job(where, name, raw, job, stages, problems):
    for key in raw:
        if key not in JOB_KEYWORDS:
            problems.append(f"{where}: job '{name}': '{key}' is not a GitLab job keyword")
    if name.startswith("."):
        return
    if "script" not in job and "trigger" not in job:
        problems.append(f"{where}: job '{name}' has no script (after extends)")
    script = job.get("script", [])
    if isinstance(script, str):
        script = [script]
    if not isinstance(script, list) or not all(isinstance(s, str) for s in script):
        problems.append(f"{where}: job '{name}': script must be a string or a list of strings")
        script = []
    text = "\n".join(script)
    for m in AUTHOR_TEXT.finditer(text):
        problems.append(f"{where}: job '{name}': script uses ${m.group(1)}, text a merge request author writes")
    if TOKEN_ECHO.search(text):
        problems.append(f"{where}: job '{name}': script prints PERFGATE_GITLAB_TOKEN")
    stage = job.get("stage", "test")
    if stage not in stages:
        problems.append(f"{where}: job '{name}': stage '{stage}' is not one of {stages}")
    rules = job.get("rules", [])
    if not isinstance(rules, list):
        problems.append(f"{where}: job '{name}': rules must be a list")
        rules = []
    for i, rule in enumerate(rules):
        if not isinstance(rule, dict):
            problems.append(f"{where}: job '{name}': rules[{i}] is not a mapping")
            continue
        for key in rule:
            if key not in RULE_KEYS:
                problems.append(f"{where}: job '{name}': rules[{i}]: '{key}' is not a rules keyword")
        if "if" in rule and not isinstance(rule["if"], str):
            problems.append(f"{where}: job '{name}': rules[{i}].if must be a string")
        if "when" in rule and rule["when"] not in RULE_WHEN:
            problems.append(f"{where}: job '{name}': rules[{i}].when '{rule['when']}' is not GitLab's")
    variables = job.get("variables", {})
    for key, value in (variables or {}).items():
        if not isinstance(value, (str, dict)):
            problems.append(f"{where}: job '{name}': variable {key} must be a string (quote numbers)")
    artifacts = job.get("artifacts")
    if artifacts is not None:
        for key in artifacts:
            if key not in ARTIFACT_KEYS:
                problems.append(f"{where}: job '{name}': artifacts:{key} is not an artifacts keyword")
        if artifacts.get("when", "on_success") not in ARTIFACT_WHEN:
            problems.append(f"{where}: job '{name}': artifacts:when must be one of {sorted(ARTIFACT_WHEN)}")
        paths = artifacts.get("paths", [])
        reports = artifacts.get("reports", {}) or {}
        for key in reports:
            if key not in REPORT_KEYS:
                problems.append(f"{where}: job '{name}': artifacts:reports:{key} is not a report type")
        junit = reports.get("junit")
        if junit is not None:
            files = [junit] if isinstance(junit, str) else junit
            if not isinstance(files, list) or not files or not all(isinstance(f, str) for f in files):
                problems.append(f"{where}: job '{name}': artifacts:reports:junit must be a path or a list of paths")
                files = []
            for f in files:
                if f not in paths:
                    problems.append(f"{where}: job '{name}': the junit report {f} is not in artifacts:paths")
                if f"--junit {f}" not in text:
                    problems.append(f"{where}: job '{name}': no script line writes the junit report {f} "
                                    "(perfgate gitlab --junit)")
            if artifacts.get("when") != "always":
                problems.append(f"{where}: job '{name}': a failing gate must still upload its junit report "
                                "(artifacts:when: always)")


def check_file(path, problems):
    try:
        with open(path) as f:
            doc = yaml.safe_load(f)
    except yaml.YAMLError as e:
        problems.append(f"{path}: not YAML: {e}")
        return
    if not isinstance(doc, dict):
        problems.append(f"{path}: not a mapping")
        return
    stages = doc.get("stages", DEFAULT_STAGES)
    if "stages" in doc:
        stages = [".pre"] + stages + [".post"]
    for key, value in (doc.get("variables") or {}).items():
        if not isinstance(value, (str, dict)):
            problems.append(f"{path}: global variable {key} must be a string (quote numbers)")
    jobs = [k for k in doc if k not in GLOBAL_KEYWORDS]
    if not any(not j.startswith(".") for j in jobs):
        problems.append(f"{path}: no visible job")
    for name in jobs:
        raw = doc[name]
        if not isinstance(raw, dict):
            problems.append(f"{path}: '{name}' is neither a global keyword nor a job")
            continue
        check_job(path, name, raw, resolve(doc, name), stages, problems)
    # The template is included into a project's pipeline: as GitLab merges
    # an include (the project's keys win), a project that sets only the
    # variables must still get a valid job.
    project = {"include": [{"local": os.path.basename(path)}],
               "variables": {"PERFGATE_BENCH": "build/my_benchmark"}}
    merged = dict(doc)
    merged["variables"] = dict(doc.get("variables", {}), **project["variables"])
    for name in jobs:
        if isinstance(merged[name], dict):
            check_job(f"{path} (included)", name, merged[name], resolve(merged, name), stages, problems)


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "."
    files = sorted(glob.glob(os.path.join(root, "ci", "gitlab", "*.gitlab-ci.yml")))
    problems = []
    if not files:
        problems.append(f"no ci/gitlab/*.gitlab-ci.yml under {root}")
    for path in files:
        check_file(path, problems)
    # The checker checks: a template with a mistake of each kind must fail.
    bad = {"perfgate": {"extends": ".x", "stage": "perf", "scripts": ["x"], "rules": [{"iff": "1"}],
                        "artifacts": {"when": "sometimes", "reports": {"junit": "j.xml", "junk": "x"}},
                        "variables": {"N": 3}},
           ".x": {"script": ["echo $CI_MERGE_REQUEST_TITLE; echo $PERFGATE_GITLAB_TOKEN"]}}
    canary = []
    for name in bad:
        check_job("canary", name, bad[name], resolve(bad, name), DEFAULT_STAGES, canary)
    expected = ["'scripts' is not a GitLab job keyword", "stage 'perf'", "'iff' is not a rules keyword",
                "artifacts:when must be", "reports:junk is not a report type", "not in artifacts:paths",
                "variable N must be a string", "CI_MERGE_REQUEST_TITLE", "prints PERFGATE_GITLAB_TOKEN",
                "no script line writes the junit report"]
    for e in expected:
        if not any(e in c for c in canary):
            problems.append(f"the checker missed a canary mistake: {e}")
    for p in problems:
        print(p)
    print(f"validate_gitlab_ci: {len(files)} file(s), {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
