"""The JSON-RPC wire: the official schema, transcripts of real agents, and checking them.

* ``schema``: pull the official v2 schema (npm ``@agentclientprotocol/sdk@2.4.0``)
  and validate messages against it, per method and sender.
* ``transcript``: the transcript format (JSON Lines), export of model traces,
  and the rule-based checker behind ``acp-lifecycle trace``.
* ``modeltrace``: model-based trace validation (``trace --model``).
"""
