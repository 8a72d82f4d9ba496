"""cli: see README 'How it works'."""
