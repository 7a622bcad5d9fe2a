"""The graph's nodes: planner, executor, fixer, summarizer, memory and the beam-search supervisor."""
