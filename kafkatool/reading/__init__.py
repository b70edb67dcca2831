"""reading layer."""
