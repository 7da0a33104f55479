"""A command agent that reports model usage: ``POST $WOPEVAL_USAGE_URL`` (stdlib only).

Reads the task input (JSON) on stdin: ``{"reports": [body, ...], "loop": body?, "answer": ...}``.
Posts each body in ``reports`` (a body may be any JSON, to test refusals), then, with ``loop``,
posts it again and again until the answer says ``stop`` (wopeval stops the process then). Prints
``{"answer": ..., "statuses": [...], "answers": [...]}`` on stdout.
"""

from __future__ import annotations

import json
import os
import sys
import time
import urllib.error
import urllib.request
from typing import Any

HEADERS = {"content-type": "application/json"}


def post(body: Any) -> tuple[int, Any]:
    request = urllib.request.Request(
        os.environ["WOPEVAL_USAGE_URL"],
        data=json.dumps(body).encode(),
        headers={
            "authorization": f"Bearer {os.environ['WOPEVAL_MCP_TOKEN']}",
            "content-type": "application/json",
        },
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def main() -> None:
    task = json.loads(sys.stdin.read())
    statuses, answers = [], []
    for body in task.get("reports", []):
        status, answer = post(body)
        statuses.append(status)
        answers.append(answer)
    if "loop" in task:
        for _ in range(10_000):  # bounded, should wopeval never stop it
            status, answer = post(task["loop"])
            if answer.get("stop"):
                time.sleep(60)  # wopeval ends the process (the test fails should it not)
                break
    print(json.dumps({"answer": task.get("answer"), "statuses": statuses, "answers": answers}))


if __name__ == "__main__":
    main()
