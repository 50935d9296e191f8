#!/usr/bin/python3
"""Parses Prometheus text exposition from stdin with the Prometheus client library's own parser
(prometheus_client.parser) and prints it as JSON: {family: {"type": T, "samples": [[name,
{labels}, value], ...]}}. A line the parser rejects fails the script (exit 1, the error on
stderr), so that a test reading its output checks the format as Prometheus reads it."""
import json
import sys

from prometheus_client.parser import text_string_to_metric_families


def main():
    text = sys.stdin.read()
    families = {}
    try:
        for family in text_string_to_metric_families(text):
            if family.name in families:
                raise ValueError("family %s appears twice" % family.name)
            families[family.name] = {
                "type": family.type,
                "samples": [[s.name, s.labels, s.value] for s in family.samples],
            }
    except Exception as e:  # the parser's own error, whatever its class
        print("exposition rejected: %s" % e, file=sys.stderr)
        return 1
    json.dump(families, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
