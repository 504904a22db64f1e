"""Core pipeline components registered by the built-in plugin."""
