"""One HTTP request, as a test's client: prints a JSON object with the status, the response
headers (lower-case names) and the body, or with --sse N the first N Server-Sent Events'
data (each parsed as JSON). Usage:
  http_request.py METHOD URL [--header 'Name: value']... [--data BODY] [--sse N]
Exit status 1 with the reason on stderr when no response arrives."""

import argparse
import http.client
import json
import sys
import urllib.parse


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("method")
    parser.add_argument("url")
    parser.add_argument("--header", action="append", default=[])
    parser.add_argument("--data")
    parser.add_argument("--sse", type=int, default=0)
    args = parser.parse_args()
    url = urllib.parse.urlsplit(args.url)
    connection = http.client.HTTPConnection(url.hostname, url.port, timeout=20)
    headers = dict(h.split(": ", 1) for h in args.header)
    path = url.path + (f"?{url.query}" if url.query else "")
    try:
        connection.request(args.method, path, body=args.data, headers=headers)
        response = connection.getresponse()
        result = {
            "status": response.status,
            "headers": {k.lower(): v for k, v in response.getheaders()},
        }
        if args.sse and response.status == 200:
            events = []
            while len(events) < args.sse:
                line = response.fp.readline().decode("utf-8")
                if not line:
                    break
                if line.startswith("data: "):
                    events.append(json.loads(line[len("data: "):]))
            result["events"] = events
        else:
            result["body"] = response.read().decode("utf-8")
    except OSError as error:
        print(f"{args.method} {args.url} failed: {error}", file=sys.stderr)
        return 1
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
