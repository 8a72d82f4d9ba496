"""index: see README 'How it works'."""
