"""A deliberately rough stdio "agent" for the serve tests (standard library only).

It answers ``initialize`` as a v1 agent would, and on its first ``session/new`` it also
writes a line that is not JSON and a message with a NaN id, then answers. It writes
every line it reads to stderr, so the test sees what reached it.
"""

import json
import sys

for raw in sys.stdin:
    sys.stderr.write(f"fake agent got: {raw}")
    msg = json.loads(raw)
    method, rid = msg.get("method"), msg.get("id")
    if method == "initialize":
        out = [{"jsonrpc": "2.0", "id": rid, "result": {"protocolVersion": 1, "agentCapabilities": {}}}]
    elif method == "session/new":
        print("this is not JSON", flush=True)
        print('{"jsonrpc": "2.0", "id": NaN, "method": "session/request_permission", "params": {}}', flush=True)
        out = [{"jsonrpc": "2.0", "id": rid, "result": {"sessionId": "s1"}}]
    elif rid is not None and method is not None:
        out = [{"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "Method not found"}}]
    else:
        out = []
    for m in out:
        print(json.dumps(m), flush=True)
