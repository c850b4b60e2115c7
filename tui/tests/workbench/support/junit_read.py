"""Reads a JUnit XML report with junitparser (a real JUnit consumer) and
prints what it understood as JSON: the totals, and per suite its counts,
properties and test cases (name, classname, results, properties).
Used by tui/tests/workbench/replay_ci.rs; exits 3 when junitparser is
missing, so the test can say how to install it."""

import json
import sys

try:
    import junitparser
except ImportError:
    sys.stderr.write("junitparser is not installed\n")
    sys.exit(3)


def properties(element):
    return [
        [p.name, p.value]
        for props in element.iterchildren(junitparser.Properties)
        for p in props
    ]


def main(path):
    xml = junitparser.JUnitXml.fromfile(path)
    suites = list(xml) if isinstance(xml, junitparser.JUnitXml) else [xml]
    out = {
        "tests": xml.tests,
        "failures": xml.failures,
        "errors": xml.errors,
        "skipped": xml.skipped,
        "suites": [],
    }
    for suite in suites:
        cases = []
        for case in suite:
            cases.append(
                {
                    "name": case.name,
                    "classname": case.classname,
                    "line": case._elem.get("line"),
                    "time": case.time,
                    "results": [
                        {
                            "kind": type(r).__name__.lower(),
                            "type": r.type,
                            "message": r.message,
                            "text": r.text,
                        }
                        for r in case.result
                    ],
                    "properties": properties(case),
                }
            )
        out["suites"].append(
            {
                "name": suite.name,
                "tests": suite.tests,
                "failures": suite.failures,
                "errors": suite.errors,
                "skipped": suite.skipped,
                "properties": [[p.name, p.value] for p in suite.properties()],
                "cases": cases,
            }
        )
    json.dump(out, sys.stdout)


main(sys.argv[1])
