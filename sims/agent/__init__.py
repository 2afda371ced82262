"""`acp-lifecycle agent`: the model agent on stdio (docs/agent.md)."""
