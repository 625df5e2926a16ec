"""One module per outside system: FalkorDB, the outbox, and later Slack, GitHub, Anthropic."""
