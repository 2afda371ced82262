"""`acp-lifecycle explore`: the model in a browser (docs/explore.md)."""
