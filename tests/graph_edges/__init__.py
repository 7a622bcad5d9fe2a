"""Tests of the graph edges: runs, resume, CLI, reports, Studio server, composition (issue 5)."""
