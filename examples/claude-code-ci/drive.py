"""Drive the real Claude Code with agent-memory's hooks against a scripted model, offline.

Usage: python3 drive.py AGENT_MEMORY_BINARY CLAUDE_BINARY [WORK_DIR]

Claude Code talks to a loopback Messages-API server (messages_api.py) whose answers are
scripted here: the model runs a failing check, reads and edits the file, runs the check again
and reports. Our hooks are installed by `agent-memory hook install claude-code` into a
throw-away CLAUDE_CONFIG_DIR, and the session has a CLAUDE.md and a goal. Three `claude -p`
runs make one session: the task; `/compact` (with --resume); a prompt after the compaction,
which the Stop hook continues until the goal is paused. Then `agent-memory run --claude` reads
the transcripts. Every assertion reads the server's request log or the memory written, and
prints one line; the first that fails ends the run with exit 1.
"""

import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
import uuid

from messages_api import MessagesApi

SESSION = str(uuid.UUID(int=0x33C1_0DE0_0000_4000_8000_0000_0000_0033))
# Words that reach the model only through injection: the CLAUDE.md rule (Claude Code's own),
# the goal's objective (our Stop and SessionStart hooks), a memory from an earlier session
# (our memory block). None of them may come back as a memory of this session.
CLAUDE_MD_RULE = "Keep every ledger amount in integer cents."
OBJECTIVE = "Make the ledger parser accept every well-formed ledger file (goal marker kestrel)."
SEEDED_MEMORY_WORD = "tidewater"
TASK = "The ledger parser crashes on an empty file; fix it."
PREFERENCE = "Prefer returning an empty list over raising an exception for empty input."
AFTER_COMPACTION_PROMPT = "Now check the parser once more."
CONTINUATIONS_BEFORE_PAUSE = 2
HOOK_CONTEXT = re.compile(r"(?:^|\n)(\w+) hook additional context: ")
RUN_TIMEOUT_SECONDS = 120

LEDGER = """def parse(text):
    lines = text.splitlines()
    header = lines[0]
    return [line.split(",") for line in lines[1:] if line and header]
"""
CHECK = """import ledger

assert ledger.parse("date,amount\\n2026-01-02,150\\n") == [["2026-01-02", "150"]]
assert ledger.parse("") == []
print("check passed")
"""
BUGGY_LINE = "    header = lines[0]\n"
FIXED_LINES = "    if not lines:\n        return []\n    header = lines[0]\n"


def check(condition, what, evidence=""):
    """One line per assertion, with an excerpt of what proves it."""
    if not condition:
        raise SystemExit(f"FAILED: {what}")
    print(f"ok: {what}" + (f" | {evidence}" if evidence else ""))


def excerpt(text, needle, width=110):
    """`text` around the first `needle`, on one line."""
    at = max(text.find(needle), 0)
    return json.dumps(text[at : at + width])


def text_of(message):
    """All the text of one message: strings, text blocks and tool results."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    parts = []
    for block in content or []:
        if block.get("type") == "text":
            parts.append(block.get("text", ""))
        elif block.get("type") == "tool_result":
            inner = block.get("content")
            parts.append(inner if isinstance(inner, str) else json.dumps(inner))
    return "\n".join(parts)


def since_last_answer(body):
    """The messages after the last assistant message: what this request adds."""
    messages = body.get("messages", [])
    last = max((i for i, m in enumerate(messages) if m["role"] == "assistant"), default=-1)
    return messages[last + 1 :], (messages[last] if last >= 0 else None)


def is_compaction(body):
    tail, _ = since_last_answer(body)
    return any("CRITICAL: Respond with TEXT ONLY" in text_of(m) for m in tail)


def stop_feedback(body):
    """The Stop hook's reason, when this request is the continuation after a block."""
    tail, _ = since_last_answer(body)
    for message in tail:
        text = text_of(message)
        if message["role"] == "user" and "Stop hook feedback:\n" in text:
            return text.split("Stop hook feedback:\n", 1)[1]
    return None


def hook_context(body, event):
    """The texts our hooks added for `event`. Claude Code sends hook context in system
    messages, several to a message, each opened by `<event> hook additional context: `."""
    found = []
    for message in body.get("messages", []):
        if message["role"] != "system":
            continue
        parts = HOOK_CONTEXT.split(text_of(message))
        found += [text for name, text in zip(parts[1::2], parts[2::2]) if name == event]
    return found


class ScriptedModel:
    """The model's side of the session, decided from each request."""

    def __init__(self, project, pause_goal):
        self.project = project
        self.pause_goal = pause_goal
        self.continuations = 0

    def __call__(self, body):
        if is_compaction(body):
            return [text(
                "<analysis>The user asked for a parser fix.</analysis>\n<summary>1. Primary "
                "Request: fix the ledger parser's crash on an empty file. It was fixed in "
                "ledger.py and `python3 check.py` passes.</summary>"
            )]
        if stop_feedback(body) is not None:
            self.continuations += 1
            if self.continuations == CONTINUATIONS_BEFORE_PAUSE:
                # The user pauses the goal while this turn runs: its Stop must let go.
                self.pause_goal()
                return [text("Pausing here: the parser handles empty files and the check passes.")]
            return [text("Checked again: every ledger case in check.py passes.")]
        tail, last_answer = since_last_answer(body)
        results = [b for m in tail if isinstance(m.get("content"), list)
                   for b in m["content"] if b.get("type") == "tool_result"]
        if results:
            call = next(b for b in last_answer["content"] if b.get("type") == "tool_use")
            result = results[-1]
            output = text_of({"content": [result]})
            ledger = str(self.project / "ledger.py")
            if call["name"] == "Bash" and (result.get("is_error") or "Traceback" in output):
                return [tool("Read", {"file_path": ledger})]
            if call["name"] == "Read":
                return [tool("Edit", {"file_path": ledger, "old_string": BUGGY_LINE,
                                      "new_string": FIXED_LINES})]
            if call["name"] == "Edit":
                return [tool("Bash", {"command": "python3 check.py", "description": "Run the checks"})]
            return [text(
                "Fixed: `parse` returns an empty list for an empty file, and `python3 check.py` "
                "passes. The crash came from reading the header line before checking that the "
                "file had any lines."
            )]
        if any(TASK in text_of(m) for m in tail):
            return [tool("Bash", {"command": "python3 check.py", "description": "Run the checks"})]
        return [text("The parser still passes every check.")]


def text(words):
    return {"type": "text", "text": words}


def tool(name, arguments):
    return {"type": "tool_use", "name": name, "input": arguments}


def main():
    agent_memory = str(pathlib.Path(sys.argv[1]).resolve())
    claude = str(pathlib.Path(sys.argv[2]).resolve())
    work = pathlib.Path(sys.argv[3] if len(sys.argv) > 3 else tempfile.mkdtemp(prefix="cc-ci-"))
    work = work.resolve()
    if work.exists():
        shutil.rmtree(work)
    project, config, home, tmp = (work / name for name in ("project", "claude", "home", "tmp"))
    for folder in (project, config, home, tmp, work / "user"):
        folder.mkdir(parents=True)
    (project / "CLAUDE.md").write_text(f"# Ledger\n\n{CLAUDE_MD_RULE}\n")
    (project / "ledger.py").write_text(LEDGER)
    (project / "check.py").write_text(CHECK)
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(work / "user"),
        "CLAUDE_CONFIG_DIR": str(config),
        "ANTHROPIC_API_KEY": "sk-ant-api03-offline-ci-key-not-a-secret-000000",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_AUTOUPDATER": "1",
        "IS_SANDBOX": "1",
        "TMPDIR": str(tmp),
    }

    def memory(*args):
        done = subprocess.run([agent_memory, *args, "--home", str(home)], env=env,
                              capture_output=True, text=True, timeout=RUN_TIMEOUT_SECONDS)
        if done.returncode != 0:
            raise SystemExit(f"FAILED: agent-memory {' '.join(args)}: {done.stderr}{done.stdout}")
        return done.stdout

    # A memory from an earlier session in this project (block and recall are scoped to the
    # session's project): the checked-in Claude Code fixture, moved to this folder.
    fixture = pathlib.Path(__file__).resolve().parents[2] / "fixtures/claude-code/projects"
    for source in fixture.rglob("*.jsonl"):
        target = work / "seed" / source.relative_to(fixture)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(source.read_text().replace("/home/dev/tidewater", str(project)))
    memory("run", str(work / "seed"))
    print(memory("hook", "install", "claude-code").strip().replace("\n", "; "))

    model = ScriptedModel(project, lambda: memory("goal", "pause", SESSION))
    with MessagesApi(model, work / "requests.jsonl") as api:
        env["ANTHROPIC_BASE_URL"] = api.base_url

        def claude_p(*args):
            before = len(api.requests)
            done = subprocess.run([claude, "-p", "--dangerously-skip-permissions", *args],
                                  cwd=project, env=env, capture_output=True, text=True,
                                  timeout=RUN_TIMEOUT_SECONDS)
            if done.returncode != 0:
                raise SystemExit(f"FAILED: claude exited {done.returncode}: {done.stderr}{done.stdout}")
            requests = api.requests[before:]
            print(f"claude -p {args[-1][:40]!r}: {len(requests)} requests")
            return requests

        task = claude_p("--session-id", SESSION, f"{TASK} {PREFERENCE}")
        memory("goal", "set", SESSION, OBJECTIVE)
        compaction = claude_p("--resume", SESSION, "/compact")
        after = claude_p("--resume", SESSION, AFTER_COMPACTION_PROMPT)
    check(not api.errors, f"the scripted model answered every request {api.errors}")

    first = hook_context(task[0], "SessionStart")
    check(len(first) == 1 and '<memory source="agent-memory"' in first[0]
          and SEEDED_MEMORY_WORD in first[0],
          "first request: SessionStart context holds the memory block with the earlier "
          f"session's memory ({SEEDED_MEMORY_WORD!r})",
          excerpt(first[0] if first else "", '<memory source="agent-memory"'))
    recall = hook_context(task[0], "UserPromptSubmit")
    check(len(recall) == 1 and "<memory-recall>" in recall[0],
          "first request: UserPromptSubmit context holds the recall fence",
          excerpt(recall[0] if recall else "", "<memory-recall>"))

    summarizing = [r for r in compaction if is_compaction(r)]
    instructions = "\n".join(text_of(m) for m in summarizing[0]["messages"][-1:]) if summarizing else ""
    check(summarizing and "keep these intact" in instructions and OBJECTIVE in instructions,
          f"compaction request ({len(summarizing)} sent): PreCompact asks the summarizer to keep "
          "the rules and the goal's objective", excerpt(instructions, "keep these intact"))

    restored = hook_context(after[0], "SessionStart")
    compacted = [c for c in restored if "earlier context was summarized" in c]
    check(len(compacted) == 1 and OBJECTIVE in compacted[0]
          and '<memory source="agent-memory"' in compacted[0] and CLAUDE_MD_RULE in compacted[0],
          "first request after the compaction: the reminder, the goal's objective, the memory "
          "block and the CLAUDE.md rule are back", excerpt(compacted[0] if compacted else "", ""))

    feedback = [stop_feedback(r) for r in after]
    continued = [f for f in feedback if f is not None]
    check(feedback[0] is None and all(f is not None for f in feedback[1:])
          and len(continued) == CONTINUATIONS_BEFORE_PAUSE,
          f"Stop hook: {len(continued)} continuations, each arriving as the next instruction "
          "after the model's answer", excerpt(continued[0] if continued else "", ""))
    check(all('<agent_memory_internal_context source="goal">' in f and OBJECTIVE in f
              for f in continued),
          "Stop hook: each continuation carries the goal's objective",
          excerpt(continued[-1] if continued else "", "<objective>"))
    goal = json.loads(memory("goal", "show", SESSION, "--json"))
    check(len(after) == 1 + CONTINUATIONS_BEFORE_PAUSE and goal["status"] == "paused"
          and "circuit breaker" not in (goal.get("statusReason") or ""),
          f"Stop hook: no request after the goal was paused ({len(after)} requests, "
          f"goal {goal['status']})", json.dumps(goal.get("statusReason")))

    ended = [json.loads(line) for line in (home / "hooks/claude-code/ended.jsonl").open()]
    check([end["session_id"] for end in ended] == [SESSION] * 3,
          "SessionEnd: each of the three runs marked the session ended", json.dumps(ended[-1]))
    # Extracted right away: the session ended, so the idle rule does not hold it back.
    summary = json.loads(memory("run", "--claude", "--json"))
    check(summary["succeeded"] == 1 and summary["failed"] == 0,
          f"run --claude, right after the session: {summary['succeeded']} session extracted, "
          f"{summary['failed']} failed", json.dumps(summary.get("skipped_by_reason")))
    written = session_memory(home / "memories", SESSION)
    lesson = [PREFERENCE, "`python3 check.py` failed",
              f"passed after adding `if not lines:` / `return []` to {project / 'ledger.py'}"]
    check(all(words in written for words in lesson) and "likely flaky" not in written,
          "the memory written holds the session's lesson: the preference, and the failing "
          "check fixed by the Edit", excerpt(written, "`python3 check.py` failed"))
    injected = [SEEDED_MEMORY_WORD, OBJECTIVE, "kestrel", CLAUDE_MD_RULE, "<memory", "memory-recall",
                "agent_memory_internal_context", "Stop hook", "earlier context was summarized",
                "keep these intact", "system-reminder"]
    leaked = [words for words in injected if words.lower() in written.lower()]
    check(not leaked, f"the memory written holds none of the injected text (checked {len(injected)} "
          f"markers; found {leaked})")


def session_memory(memories, session):
    """What the write path stored for `session`: its raw memory and its rollout summary."""
    raw = (memories / "raw_memories.md").read_text()
    sections = raw.split("\n## Thread `")
    mine = [s for s in sections if s.startswith(f"{session}`")]
    if len(mine) != 1:
        raise SystemExit(f"FAILED: raw_memories.md has {len(mine)} sections for {session}")
    summary_file = next(line.split(": ", 1)[1] for line in mine[0].splitlines()
                        if line.startswith("rollout_summary_file: "))
    return mine[0] + "\n" + (memories / "rollout_summaries" / summary_file).read_text()


if __name__ == "__main__":
    main()
