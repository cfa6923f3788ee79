"""Third-party code for the conformance corpus (filled in below)."""
CASES = []
