#!/usr/bin/env python3
"""Checks that an SVG document from JourneySharing's SVGRenderer is valid XML in the SVG
namespace, with the test hooks the share page and its browser tests rely on.

Reads the document on stdin and parses it with the standard library's XML parser
(xml.etree.ElementTree, expat underneath: a real parser, not ours). Speaks the line protocol
of check_lines.py: one `CHECK <name>` per check that passed, then
`RESULT ok <JSON report>` and exit status 0; or `FAILED <name>: <why>` and exit status 1.

The report names what was found, for the Swift test to assert on:
  {"root": "{http://www.w3.org/2000/svg}svg", "tripStatus": "...", "width": "...",
   "height": "...", "elements": N,
   "routes": [{"tag": "polyline", "leg": "active", "speed": "NORMAL", "stroke": "#34a853",
               "points": K}, ...],
   "markers": [{"tag": "g", "role": "vehicle", "lat": 1.0, "lng": 2.0}, ...],
   "texts": ["title text", ...]}
"""

from __future__ import annotations

import sys
import xml.etree.ElementTree as ET

from check_lines import CheckFailed, check, report

SVG = "{http://www.w3.org/2000/svg}"
ROUTE_SPEEDS = {"NORMAL", "SLOW", "TRAFFIC_JAM", "NO_DATA"}
ROUTE_LEGS = {"active", "remaining"}
MARKER_ROLES = {"vehicle", "pickup", "dropoff", "intermediate"}


def inspect(document: str) -> dict:
    try:
        root = ET.fromstring(document)
    except ET.ParseError as error:
        raise CheckFailed(f"well-formed XML: {error}") from None
    check("well-formed XML", True)
    check("root is svg in the SVG namespace", root.tag == f"{SVG}svg", f"root is {root.tag}")
    status = root.get("data-trip-status")
    check("root has data-trip-status", bool(status), f"attributes {root.attrib}")
    check("root has a viewBox", bool(root.get("viewBox")))

    routes, markers, texts = [], [], []
    elements = 0
    for element in root.iter():
        elements += 1
        check(f"{element.tag} is in the SVG namespace", element.tag.startswith(SVG))
        if element.text and element.text.strip():
            texts.append(element.text)
        role = element.get("data-role")
        if role == "route":
            leg, speed = element.get("data-leg"), element.get("data-speed")
            check("route leg is known", leg in ROUTE_LEGS, f"data-leg={leg!r}")
            check("route speed is known", speed in ROUTE_SPEEDS, f"data-speed={speed!r}")
            points = element.get("points", "").split()
            check("route has two points or more", len(points) >= 2, f"points={points!r}")
            for point in points:
                x, y = point.split(",")
                float(x), float(y)
            routes.append({"tag": element.tag[len(SVG):], "leg": leg, "speed": speed,
                           "stroke": element.get("stroke"), "points": len(points)})
        elif role is not None:
            check("marker role is known", role in MARKER_ROLES, f"data-role={role!r}")
            lat, lng = element.get("data-lat"), element.get("data-lng")
            check(f"{role} has data-lat and data-lng", lat is not None and lng is not None)
            markers.append({"tag": element.tag[len(SVG):], "role": role,
                            "lat": float(lat), "lng": float(lng)})
    return {"root": root.tag, "tripStatus": status, "width": root.get("width"),
            "height": root.get("height"), "elements": elements, "routes": routes,
            "markers": markers, "texts": texts}


def main() -> int:
    document = sys.stdin.buffer.read().decode("utf-8")
    return report(lambda: inspect(document), ET.ParseError, str)


if __name__ == "__main__":
    sys.exit(main())
