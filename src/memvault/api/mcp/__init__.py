"""memvault over the Model Context Protocol: tools and resources over the same core functions as
the HTTP routes, served over stdio by `memvault mcp` and over streamable HTTP at `/mcp` by the
local server. Local only: nothing the Worker imports reaches this package or the MCP SDK."""
