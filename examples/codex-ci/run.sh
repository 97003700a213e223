#!/usr/bin/env bash
# The codex drop-in, proven with the real codex, offline.
#
# Installs @openai/codex (CODEX_VERSION) into target/codex-npm, runs it against the loopback
# Responses-API server in this folder with the configuration the README recommends, and checks:
#   1. codex's interactive sessions (`codex app-server`) are extracted by `agent-memory run --codex`
#      (codex stamps them with no disabled memory mode, and its own extraction claims none);
#   2. after two codex restarts, a new session's first request carries our memory_summary.md,
#      and the memory folder still holds every file agent-memory wrote, byte for byte
#      (codex's start-up consolidation never ran: agent-memory holds its lease);
#   3. a note codex's add_ad_hoc_note tool leaves in extensions/ad_hoc/notes/ is consolidated;
#   4. codex's memories.version = "v2" is refused with a message naming the setting.
#
# Usage: examples/codex-ci/run.sh AGENT_MEMORY_BINARY
set -euo pipefail

CODEX_VERSION=0.169.0
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
agent_memory=$(realpath "$1")
prefix="$repo/target/codex-npm"

if [ "$("$prefix/node_modules/.bin/codex" --version 2>/dev/null)" != "codex-cli $CODEX_VERSION" ]; then
  npm install --silent --no-audit --no-fund --prefix "$prefix" "@openai/codex@$CODEX_VERSION"
fi
codex="$prefix/node_modules/.bin/codex"
echo "using $("$codex" --version)"

work=$(mktemp -d)
server_pid=
cleanup() {
  if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

log="$work/requests.jsonl"
python3 "$here/responses_server.py" "$log" "$work/port" &
server_pid=$!
for _ in $(seq 50); do [ -s "$work/port" ] && break; sleep 0.1; done
port=$(cat "$work/port")

export CODEX_HOME="$work/codex-home"
home="$work/agent-memory-home"
project="$work/project"
mkdir -p "$CODEX_HOME" "$home" "$project"
# The README's configuration, plus the loopback model provider.
cat > "$CODEX_HOME/config.toml" <<TOML
model = "mock-model"
model_provider = "loopback"

[model_providers.loopback]
name = "loopback"
base_url = "http://127.0.0.1:$port/v1"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0

[features]
memories = true

[memories]
max_rollout_age_days = 0
TOML

session() { python3 "$here/app_session.py" "$codex" "$project" "$1" 60 2>>"$work/codex.stderr"; }
requests() { wc -l < "$log"; }

echo "-- two interactive codex sessions"
session "In this repo always run \`make check\` before committing. I prefer small commits."
session "The deploy script is scripts/ship.sh."
# As if seven hours had passed: past agent-memory's idle rule and codex's own.
python3 "$here/backdate.py" "$CODEX_HOME" 7

echo "-- agent-memory run --codex"
"$agent_memory" run --codex --home "$home" --json > "$work/run.json"
# codex's add_ad_hoc_note tool writes one file per note, the note text alone.
mkdir -p "$CODEX_HOME/memories/extensions/ad_hoc/notes"
printf 'Release builds need the vendored OpenSSL; never bump it without asking.\n' \
  > "$CODEX_HOME/memories/extensions/ad_hoc/notes/2026-01-02T03-04-05-vendored-openssl.md"
"$agent_memory" run --codex --home "$home" --json > "$work/run-note.json"
(cd "$CODEX_HOME/memories" && find . -type f -not -path '*/.*' -print0 | sort -z | xargs -0 sha256sum) \
  > "$work/written.sha256"
after_run=$(requests)

echo "-- two codex restarts, then a new session"
session "What's in this repo?"
session "Anything else?"
before_last=$(requests)
session "Which checks should I run before committing?"

python3 - "$work" "$after_run" "$before_last" <<'PY'
import json, pathlib, subprocess, sys
work = pathlib.Path(sys.argv[1])
after_run, before_last = int(sys.argv[2]), int(sys.argv[3])
root = pathlib.Path(work / "codex-home" / "memories")
run = json.loads((work / "run.json").read_text())
assert run["succeeded"] >= 1 and run["failed"] == 0, run
assert run.get("skipped_by_reason", {}).get("disabled_by_session", 0) == 0, run
assert run["codex_consolidation"]["lease"] == "held", run
print(f"run --codex: {run['claimed']} extracted, {run['succeeded']} stored; codex's lease held")

memory = (root / "MEMORY.md").read_text()
assert "vendored OpenSSL" in memory, memory
assert "extensions/ad_hoc/notes/2026-01-02T03-04-05-vendored-openssl.md" in memory, memory
print("ad-hoc note: consolidated into MEMORY.md")

requests = [json.loads(line)["body"] for line in (work / "requests.jsonl").read_text().splitlines()]
later = requests[after_run:]
structured = [r for r in later if isinstance(r.get("text"), dict) and r["text"].get("format")]
assert not structured, "codex ran its own extraction after our run"
consolidation = [r for r in later if "phase2_workspace_diff.md" in json.dumps(r)]
assert not consolidation, "codex ran its own consolidation after our run"
print(f"codex after our run: {len(later)} requests, none extraction or consolidation")

summary = (root / "memory_summary.md").read_text().strip()
first = requests[before_last]
developer = "\n".join(
    part.get("text", "")
    for item in first.get("input", [])
    if item.get("role") == "developer"
    for part in item.get("content", [])
)
assert summary in developer, "the new session's first request lacks our memory_summary.md"
start = developer.index(summary)
print("first request of the new session carries memory_summary.md:")
print("  ..." + developer[max(0, start - 80):start + 160].replace("\n", "\n  ") + "...")

now = subprocess.run(
    "find . -type f -not -path '*/.*' -print0 | sort -z | xargs -0 sha256sum",
    shell=True, cwd=root, capture_output=True, text=True, check=True,
).stdout
written = (work / "written.sha256").read_text()
missing = set(written.splitlines()) - set(now.splitlines())
assert not missing, f"changed or gone after codex restarts: {missing}"
print(f"memory folder: all {len(written.splitlines())} files agent-memory wrote unchanged")
PY

echo "-- memories.version = \"v2\" is refused"
sed -i 's/^max_rollout_age_days = 0$/max_rollout_age_days = 0\nversion = "v2"/' "$CODEX_HOME/config.toml"
if "$agent_memory" run --codex --home "$home" 2> "$work/v2.err"; then
  echo "run --codex accepted memories.version = \"v2\"" >&2
  exit 1
fi
grep -q 'memories.version = "v2"' "$work/v2.err"
cat "$work/v2.err"
echo "codex drop-in: ok"
