"""app: see README 'How it works'."""
