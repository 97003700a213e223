"""Drive `agent-memory mcp` with the official MCP Python SDK (probe for the report)."""
import asyncio, json, sys
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

async def main(binary, home):
    params = StdioServerParameters(command=binary, args=["mcp", "--home", home])
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            print("server:", init.server_info.name, init.protocol_version)
            tools = (await session.list_tools()).tools
            print("tools:", [t.name for t in tools])
            calls = {
                "memory_status": {},
                "memory_list": {},
                "memory_note": {"text": "User prefers cargo nextest over cargo test"},
                "memory_search": {"query": "what test runner does the user prefer"},
                "memory_read": {"path": "memory_summary.md"},
            }
            for name, args in calls.items():
                r = await session.call_tool(name, args)
                print(name, "isError" if r.is_error else "ok", json.dumps(r.structured_content)[:160])
            r = await session.call_tool("memory_read", {"path": "../state.sqlite"})
            print("failure:", r.is_error, json.dumps(r.structured_content)[:160])

asyncio.run(main(sys.argv[1], sys.argv[2]))
