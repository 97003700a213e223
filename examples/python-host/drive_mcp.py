"""Drive `agent-memory mcp` the way a Python host would, with the official MCP SDK.

Usage: python drive_mcp.py AGENT_MEMORY_BINARY

It makes a throwaway home, sets a goal on one thread, then speaks to the server over stdio:
a request before initialization (refused, never a hang), initialization, the tool list, a call
to every memory tool and both goal tools, and failures (a refused path, a refused goal report,
an unknown tool). Every structured result is checked against the tool's `outputSchema` with
`jsonschema`, every text result against its structured twin, and the warnings the server has
for the caller must reach it in the result. Exits 1 on the first check that fails.
"""

import asyncio
import json
import subprocess
import sys
import tempfile

import jsonschema
from mcp import ClientSession, MCPError, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.shared.message import SessionMessage
from mcp.types import JSONRPCError, JSONRPCRequest

THREAD = "python-host"
# The project the session works in: notes saved through the server are this project's.
PROJECT = "/work/python-host-project"
# No MCP call of a healthy local server takes this long; a hang fails the run instead of CI.
TIMEOUT_SECONDS = 30
MEMORY_TOOLS = {"memory_status", "memory_list", "memory_search", "memory_read", "memory_note"}
GOAL_TOOLS = {"get_goal", "update_goal"}


def check(condition, what):
    if not condition:
        raise SystemExit(f"FAILED: {what}")
    print(f"ok: {what}")


class Host:
    def __init__(self, session, tools):
        self.session = session
        self.schemas = {tool.name: tool.output_schema for tool in tools}

    async def call(self, name, arguments, *, fails=False):
        """Calls a tool; checks its result is structured, valid and as failed as expected."""
        result = await asyncio.wait_for(
            self.session.call_tool(name, arguments), TIMEOUT_SECONDS
        )
        structured = result.structured_content
        if structured is None:
            raise SystemExit(f"FAILED: {name} returned no structured content")
        jsonschema.validate(structured, self.schemas[name])
        texts = [block.text for block in result.content if block.type == "text"]
        if [json.loads(text) for text in texts] != [structured]:
            raise SystemExit(f"FAILED: {name}'s text content is not its structured content")
        if bool(result.is_error) != fails:
            raise SystemExit(f"FAILED: {name} isError is {result.is_error}, expected {fails}")
        check(True, f"{name}: {'failed' if fails else 'answered'} as expected; "
                    "the result validates against its outputSchema")
        return structured


async def before_initialization(binary, home):
    """A request sent before `initialize` is refused at once (an error or a closed connection).

    Sent as a raw JSON-RPC message on the SDK's stdio transport: the SDK's session would put
    its own handshake metadata on it, which is not what a misbehaving client sends.
    """
    params = StdioServerParameters(command=binary, args=["mcp", "--home", home])
    async with stdio_client(params) as (read, write):
        request = JSONRPCRequest(jsonrpc="2.0", id=1, method="tools/list", params={})
        await write.send(SessionMessage(request))
        outcome = "the connection was closed"
        try:
            async with asyncio.timeout(TIMEOUT_SECONDS):
                async for message in read:
                    if isinstance(message, SessionMessage):
                        reply = message.message
                        outcome = (f"error {reply.error.code}: {reply.error.message}"
                                   if isinstance(reply, JSONRPCError) else "answered")
                        break
        except TimeoutError:
            outcome = "hung"
    print(f"before initialization: {outcome}")
    check(outcome.startswith(("error", "the connection was closed")),
          "a request before initialization is refused at once")


async def session_run(binary, home):
    params = StdioServerParameters(
        command=binary, args=["mcp", "--home", home, "--thread", THREAD, "--cwd", PROJECT]
    )
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            init = await asyncio.wait_for(session.initialize(), TIMEOUT_SECONDS)
            print(f"server: {init.server_info.name} {init.server_info.version}, "
                  f"protocol {init.protocol_version}")
            check(init.server_info.name == "agent-memory", "the server names itself")
            check("memory_search" in (init.instructions or ""), "instructions name the tools")

            tools = (await asyncio.wait_for(session.list_tools(), TIMEOUT_SECONDS)).tools
            names = {tool.name for tool in tools}
            print(f"tools: {sorted(names)}")
            check(names == MEMORY_TOOLS | GOAL_TOOLS, "every memory tool and goal tool is listed")
            check(all(tool.output_schema for tool in tools), "every tool has an outputSchema")
            host = Host(session, tools)

            status = await host.call("memory_status", {})
            print(f"memory_status: state {status['state']}")
            check(status["state"] == "empty", "a fresh home's memory is empty, not unavailable")

            note = await host.call(
                "memory_note", {"text": "User prefers cargo nextest over cargo test"}
            )
            print(f"memory_note: {note['path']} indexed={note['indexed']}")
            await host.call("memory_note", {"text": "The CI runner caches ~/.cargo/registry",
                                            "topic": "ci"})

            listed = await host.call("memory_list", {"depth": 3})
            paths = [entry["path"] for entry in listed["entries"]]
            print(f"memory_list: {paths}")
            check(note["path"] in paths, "the note is listed")

            found = await host.call(
                "memory_search", {"query": "what test runner does the user prefer"}
            )
            print(f"memory_search: {len(found['hits'])} hit(s), warning: {found['warning']}")
            check(any(hit["path"] == note["path"] for hit in found["hits"]),
                  "search finds the note from a question")
            check("simplified" in (found["warning"] or ""),
                  "the search's warning reaches the client in the result")

            read = await host.call("memory_read", {"path": note["path"]})
            check("cargo nextest" in read["content"], "memory_read returns the note")
            check(f"\ncwd: {PROJECT}\n" in read["content"], "the note names the server's --cwd")

            replaced = await host.call("memory_note", {
                "id": note["path"], "version": read["version"],
                "text": "User prefers cargo nextest, with --no-fail-fast"})
            check(replaced["path"] == note["path"], "memory_note replaces a note by id")
            stale = await host.call("memory_note", {
                "id": note["path"], "version": read["version"], "delete": True}, fails=True)
            print(f"memory_note delete with the old version: {stale['code']}: {stale['error']}")
            check(stale["code"] == "conflict", "an edit with an older version is refused")

            refused = await host.call("memory_read", {"path": "../state.sqlite"}, fails=True)
            print(f"memory_read ../state.sqlite: {refused['code']}: {refused['error']}")
            check(refused["code"] == "path_refused", "a path outside memory is refused")

            goal = await host.call("get_goal", {})
            print(f"get_goal: {goal['goal']['objective']!r} ({goal['goal']['status']})")
            check(goal["goal"]["objective"] == "Ship the python host", "get_goal shows the goal")

            wrong = await host.call(
                "update_goal",
                {"status": "complete", "reason": "done", "goal_id": "not-this-goal"},
                fails=True,
            )
            print(f"update_goal on another goal id: {wrong['code']}: {wrong['message']}")
            done = await host.call(
                "update_goal",
                {"status": "complete", "reason": "the driver ran every tool"},
            )
            check(done["goal"]["status"] == "complete", "update_goal completes the goal")

            try:
                await asyncio.wait_for(session.call_tool("memory_forget", {}), TIMEOUT_SECONDS)
                unknown = "answered"
            except MCPError as error:
                unknown = f"error {error.error.code}: {error.error.message}"
            print(f"unknown tool: {unknown}")
            check(unknown.startswith("error"), "an unknown tool is a protocol error")


async def main(binary):
    with tempfile.TemporaryDirectory(prefix="python-host-") as home:
        subprocess.run(
            [binary, "goal", "set", THREAD, "Ship the python host", "--home", home],
            check=True, stdout=subprocess.DEVNULL,
        )
        await before_initialization(binary, home)
        await session_run(binary, home)
    print("python host: every check passed")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit("usage: drive_mcp.py AGENT_MEMORY_BINARY")
    asyncio.run(main(sys.argv[1]))
