"""GET a URL and print its status, content type and body: the HTTP client of tests that read
fleet-sim's /metrics. Exit status 1 with the reason on stderr when the request fails."""

import sys
import urllib.error
import urllib.request


def main() -> int:
    url = sys.argv[1]
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            print(response.status)
            print(response.headers.get("Content-Type", ""))
            sys.stdout.write(response.read().decode("utf-8"))
    except (urllib.error.URLError, OSError) as error:
        print(f"GET {url} failed: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
