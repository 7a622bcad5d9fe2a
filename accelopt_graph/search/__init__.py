"""Search policies of the AccelOpt loop: beam selection, plan merging and stop rules (pure functions)."""
