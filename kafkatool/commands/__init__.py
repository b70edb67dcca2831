"""commands layer."""
