"""N viewers of one Server-Sent Events stream at once: each opens URL, reads its first
`data:` event, and all stay connected for HOLD seconds, then close. Prints one JSON report:
{"connected": viewers that got a first event, "statuses": HTTP statuses seen,
 "watchedSeconds": from the first connection opening to the last closing}.
Usage: sse_viewers.py URL N HOLD"""

import http.client
import json
import sys
import threading
import time
import urllib.parse


def main() -> int:
    url, count, hold = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
    parts = urllib.parse.urlsplit(url)
    lock = threading.Lock()
    report = {"connected": 0, "statuses": {}}
    everyone_in = threading.Barrier(count + 1, timeout=60)
    release = threading.Event()

    def viewer() -> None:
        connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=60)
        try:
            connection.request("GET", parts.path)
            response = connection.getresponse()
            with lock:
                report["statuses"][response.status] = report["statuses"].get(response.status, 0) + 1
            while response.status == 200:
                line = response.fp.readline()
                if not line:
                    break
                if line.startswith(b"data: "):
                    with lock:
                        report["connected"] += 1
                    break
        except OSError:
            pass
        try:
            everyone_in.wait()
        except threading.BrokenBarrierError:
            pass
        release.wait(hold + 60)
        connection.close()

    started = time.monotonic()
    threads = [threading.Thread(target=viewer, daemon=True) for _ in range(count)]
    for thread in threads:
        thread.start()
    try:
        everyone_in.wait()
    except threading.BrokenBarrierError:
        report["error"] = "not every viewer connected within 60 s"
    time.sleep(hold)
    release.set()
    for thread in threads:
        thread.join(10)
    report["watchedSeconds"] = time.monotonic() - started
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
