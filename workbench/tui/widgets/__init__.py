"""Reusable widgets: each keeps its own DEFAULT_CSS and knows nothing about the app's workspace."""
