"""Text from outside, read safely: HTML, declared charsets, YAML within bounds, repaired Unicode."""
