"""The line protocol of the client scripts Swift tests run against our servers
(sim_google_client.py, health_reflection_client.py): one `CHECK <name>` line per check that
passed, then `RESULT ok <JSON summary>` and exit status 0; or, at the first failure,
`FAILED <name>: <why>` and exit status 1.
"""

from __future__ import annotations

import json
from typing import Callable


class CheckFailed(Exception):
    pass


def check(name: str, condition: bool, why: str = "") -> None:
    """Prints `CHECK <name>` when `condition` holds; raises CheckFailed otherwise."""
    if not condition:
        raise CheckFailed(f"{name}: {why}")
    print(f"CHECK {name}", flush=True)


def report(run: Callable[[], dict], call_error: type[BaseException],
           describe: Callable[[BaseException], str]) -> int:
    """Runs the checks of `run` and returns the exit status. A `call_error` (the client
    library's failed call) is a failure described by `describe`; any other exception is a bug
    here or an unexpected answer: reported, then raised, not hidden."""
    try:
        summary = run()
    except CheckFailed as failure:
        print(f"FAILED {failure}", flush=True)
        return 1
    except call_error as error:
        print(f"FAILED call: {describe(error)}", flush=True)
        return 1
    except Exception as error:
        print(f"FAILED unexpected {type(error).__name__}: {error}", flush=True)
        raise
    print(f"RESULT ok {json.dumps(summary)}", flush=True)
    return 0
