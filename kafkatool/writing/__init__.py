"""writing layer."""
