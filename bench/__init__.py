"""fabriclab benchmarks (`make bench`): figures measured side by side in one run."""
