"""Utilities: hooks handles now; ``gradlab.utils.data`` joins with the toolkit."""
