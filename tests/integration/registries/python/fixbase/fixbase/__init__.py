BASE = "base 1.0.0"
