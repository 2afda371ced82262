"""Ways to run the model: the exhaustive explorer, named configurations, the CLI."""
