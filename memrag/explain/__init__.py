"""explain: see README 'How it works'."""
