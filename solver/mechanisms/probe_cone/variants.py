"""The probe-cone mechanism's three variants (seed 001)."""
VARIANTS = ("existing", "modified_dampers", "movable_limiter")
